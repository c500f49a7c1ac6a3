import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { DocumentBody } from '../../src/contract/index.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { flateBombPdf } from '../helpers/bombs.ts';
import { tempDir, writeJson } from '../helpers/cli.ts';
import { childrenOf } from '../helpers/proc.ts';
import { call, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { exactLedger, formOf, postForm, stored } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { mailer } from '../helpers/smtp.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Serve's document work is bounded whatever the bytes, on every route. The bomb
 * is the one of the issue: a one-page PDF whose content stream is Flate'd twice over 1 GB of
 * zeros (2.5 KB on disk). Before, two of them by storage path took serve to 4.1–4.7 GB of
 * resident memory, an honest inline request beside them got a 503 after 30 s, and each bomb
 * completed after minutes and was charged. Now the engine reads in child processes that are
 * killed at processing.engine_memory_mb (1024 MB by default). The tests whose bombs are read to
 * the limit set it to 192 MB, a fifth of the bomb: what is in question is that serve holds none
 * of it and the limit it was given ends each one (the error names it). Read to the shipped limit,
 * two bombs cost 5-10 CPU-seconds more for the same answer.
 */

const OPENING = resolveConfig(DEFAULT_CONFIG).credits;
const GB = 1024 * 1024 * 1024;
const LONG = 180_000;
/**
 * The engine's memory limit where a bomb is read to it: the 1 GB bomb is five times it; an honest
 * invoice's process peaks at 120-130 MB (each bomb read to 256 MB cost about 0.2 CPU-seconds more).
 */
const LIMIT_MB = 192;
/** When a reading counts as slow (processing.slow_ms) in the fairness test. */
const SLOW_MS = 200;

let bomb: Buffer;
beforeAll(async () => {
  bomb = await flateBombPdf(GB);
  expect(bomb.length).toBeLessThan(10_000);
}, 120_000);

function status(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
}
const kb = (text: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0);

/** A finished document as the emulator shows it (with notes), and the ledger's entries for it. */
async function refundedError(s: { url: string }, id: string) {
  const doc = DocumentBody.parse((await waitForDocument(s, id, undefined, LONG)).body);
  const detail = (await call(s, 'GET', `/_emulator/documents/${id}`, { key: null })).body;
  const entries = (await exactLedger(s, OPENING)).entries.filter((e) => e.document_id === id);
  return { doc, notes: detail.notes as string[], kinds: entries.map((e) => e.kind).sort() };
}

describe('hostile: the engine is bounded on every route', () => {
  it(
    'a bomb by the app upload, the inbound webhook and email ends in error, refunded; an honest one beside them completes',
    async ({ emulator }) => {
      // The routes are in question here, not the limit: a 192 MB limit (the 1 GB bomb is five times
      // it, an honest invoice needs about 120 MB) stops each bomb five times sooner than the shipped one.
      const s = await emulator(
        { processing: { ms_per_page: 0, concurrency: 2, engine_memory_mb: LIMIT_MB } },
        { smtpPort: 0 },
      );
      const app = await postForm(
        `${s.url}/_emulator/parsers/prs_invoices/documents`,
        formOf([{ name: 'app-bomb.pdf', bytes: bomb }]),
      );
      expect(app.status, JSON.stringify(app.body)).toBe(200);
      const inbound = await postForm(
        s.inboundUrls.get('prs_invoices')!,
        formOf([{ name: 'inbound-bomb.pdf', bytes: bomb }]),
      );
      expect(inbound.status, JSON.stringify(inbound.body)).toBe(200);
      const transport = mailer(s.smtpPort!);
      await transport.sendMail({
        from: 'ap@example.com',
        to: 'prs_invoices@localhost',
        subject: 'Invoices',
        text: 'attached',
        attachments: [
          { filename: 'mail-bomb.pdf', content: bomb, contentType: 'application/pdf' },
          { filename: 'mail-honest.pdf', content: await invoicePdf(9), contentType: 'application/pdf' },
        ],
      });
      const docs = (await call(s, 'GET', '/_emulator/documents?limit=100', { key: null })).body.documents as Array<{
        document_id: string;
        file_name: string;
      }>;
      const byName = new Map(docs.map((d) => [d.file_name, d.document_id]));
      expect([...byName.keys()].sort()).toEqual([
        'app-bomb.pdf',
        'inbound-bomb.pdf',
        'mail-bomb.pdf',
        'mail-honest.pdf',
      ]);
      const honest = DocumentBody.parse(
        (await waitForDocument(s, byName.get('mail-honest.pdf')!, undefined, LONG)).body,
      );
      expect(honest.status, honest.error ?? '').toBe('completed');
      for (const name of ['app-bomb.pdf', 'inbound-bomb.pdf', 'mail-bomb.pdf']) {
        const { doc, notes, kinds } = await refundedError(s, byName.get(name)!);
        expect(doc.status).toBe('error');
        expect(doc.error).toContain(`more memory than the engine allows (${LIMIT_MB} MB`);
        expect(notes.join('\n')).toContain('processing.engine_memory_mb');
        expect(kinds).toEqual(['refund', 'reserve']);
      }
      expect(await exactLedger(s, OPENING)).toMatchObject({ balance: OPENING - 1, negative: 0 });
    },
    LONG * 2,
  );

  it(
    'honest documents flow beside documents that read for long: neither the background queue nor the engine is held by them',
    async ({ emulator }) => {
      // 100 MB of path operators, Flate'd twice: about 7 CPU-seconds of reading each (ten times what the
      // honest document needs with its process's start), within a raised memory limit, so only their
      // time is in question here; 400 MB cost a CPU-second more to make for the same answer, as they
      // are read only until the test ends. They count as slow after processing.slow_ms: 200 ms rather
      // than the shipped 5 s, which both of them spent reading on both cores while the honest document
      // waited (the rule is the same, its threshold a setting).
      const slow = await flateBombPdf(100 * 1024 * 1024, 'Invoice Number: INV-SLOW', '0 0 m\n');
      const s = await emulator({
        processing: { ms_per_page: 0, concurrency: 2, engine_memory_mb: 4096, slow_ms: SLOW_MS },
      });
      const slowIds: string[] = [];
      for (const name of ['slow-1.pdf', 'slow-2.pdf']) {
        const ticket = await stored(s, slow, name);
        const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
        expect(r.status).toBe(200);
        slowIds.push(r.body.document_id as string);
      }
      // Both background places and both engine processes are taken by the slow ones.
      const ticket = await stored(s, await invoicePdf(13), 'honest.pdf');
      const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
      const honest = DocumentBody.parse((await waitForDocument(s, r.body.document_id, undefined, LONG)).body);
      expect(honest.status, honest.error ?? '').toBe('completed');
      // It went past them: both are still being read.
      const states = await Promise.all(
        slowIds.map(async (id) => DocumentBody.parse((await call(s, 'GET', `/api/v1/documents/${id}`)).body).status),
      );
      expect(states).toEqual(['processing', 'processing']);
    },
    LONG,
  );

  it(
    'a bomb past processing.timeout_ms ends in error, refunded, with the deadline in its notes',
    async ({ emulator }) => {
      // 500 ms: the bomb reaches the engine's 1024 MB limit seconds later, so only the deadline ends it.
      const s = await emulator({ processing: { ms_per_page: 0, concurrency: 2, timeout_ms: 500 } });
      const ticket = await stored(s, bomb, 'slow-bomb.pdf');
      const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
      expect(r.status).toBe(200);
      const { doc, notes, kinds } = await refundedError(s, r.body.document_id as string);
      expect(doc.status).toBe('error');
      expect(doc.error).toContain('took longer than 500 ms (processing.timeout_ms)');
      expect(notes.join('\n')).toContain('processing.timeout_ms');
      expect(kinds).toEqual(['refund', 'reserve']);
    },
    LONG,
  );

  it(
    'SIGTERM during a bomb stops serve (exit 0, no engine process left); the restart takes the bomb up again and ends it, and two more bombs by storage path beside honest inline and upload documents: the honest ones complete, the bombs end in error refunded',
    async ({ spawnServe }) => {
      const dir = tempDir();
      const config = writeJson(dir, 'config.json', {
        ...DEFAULT_CONFIG,
        processing: { ms_per_page: 0, concurrency: 2 },
      });
      const dataDir = join(dir, 'data');
      const first = await spawnServe(['--config', config, '--data-dir', dataDir, '--no-listen']);
      const ticket = await stored(first, bomb, 'bomb.pdf');
      const r = await call(first, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
      const id = r.body.document_id as string;
      // The engine is inside the bomb: its process has grown past 200 MB (an idle engine process
      // holds 60-130 MB: past 100 MB, the bomb might not have reached the engine yet).
      const INSIDE_MB = 200;
      const pid = first.child.pid!;
      const deadline = Date.now() + 60_000;
      const engineMb = () => Math.max(0, ...childrenOf(pid).map((child) => kb(status(child) ?? '', 'VmRSS') / 1024));
      while (engineMb() < INSIDE_MB && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
      expect(engineMb()).toBeGreaterThanOrEqual(INSIDE_MB);
      const children = childrenOf(pid);
      first.child.kill('SIGTERM');
      const result = await first.child;
      expect(result.exitCode).toBe(0);
      // No engine process outlives serve.
      for (const child of children) expect(status(child)).toBeNull();

      // The restart's limit is lower (the 1 GB bomb is five times it): what is in question now is that
      // it takes the bomb up again, and a lower limit ends it sooner. Beside it, two more bombs by
      // storage path and two honest documents (upload-and-poll, and inline with its 30 s deadline):
      // the honest ones complete, every bomb ends in error refunded, and serve holds none of them
      // (unbounded, two bombs hold serve's memory and CPU, and the inline request gets a 503). One serve for both claims: each start
      // of serve is a CPU-second or more with the engine process its first document starts.
      const lower = writeJson(dir, 'config-lower.json', {
        ...DEFAULT_CONFIG,
        processing: { ms_per_page: 0, concurrency: 2, engine_memory_mb: LIMIT_MB },
      });
      const second = await spawnServe(['--config', lower, '--data-dir', dataDir, '--no-listen']);
      const bombIds = [id];
      for (const name of ['bomb-1.pdf', 'bomb-2.pdf']) {
        const ticket = await stored(second, bomb, name);
        const r = await call(second, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
        expect(r.status).toBe(200);
        bombIds.push(r.body.document_id as string);
      }
      const honestTicket = await stored(second, await invoicePdf(7), 'honest.pdf');
      const honest = await call(second, 'POST', '/api/v1/extract', {
        body: { storage_path: honestTicket.storage_path },
      });
      expect(honest.status).toBe(200);
      const inline = await call(second, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(8)) });
      expect(inline.status, JSON.stringify(inline.body)).toBe(200);
      expect(inline.body.results.invoice_number).toMatch(/^INV-0*8$/);
      const upload = DocumentBody.parse((await waitForDocument(second, honest.body.document_id, undefined, LONG)).body);
      expect(upload.status, upload.error ?? '').toBe('completed');

      for (const bombId of bombIds) {
        const { doc, notes, kinds } = await refundedError(second, bombId);
        expect(doc.status).toBe('error');
        expect(doc.error).toContain(`more memory than the engine allows (${LIMIT_MB} MB`);
        expect(notes.join('\n')).toContain('processing.engine_memory_mb');
        expect(kinds).toEqual(['refund', 'reserve']);
      }
      const ledger = await exactLedger(second, OPENING);
      expect(ledger).toMatchObject({ balance: OPENING - 2, sum: OPENING - 2, negative: 0 });
    },
    LONG * 2,
  );
});
