import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { DocumentBody } from '../../src/contract/index.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { CLI, cleanEnv, tempDir, writeJson } from '../helpers/cli.ts';
import { call, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { exactLedger, stored, xrefBombPdf } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Bounded requests: a decompression bomb costs at most the inline deadline and one
 * worker's heap, a file over the rehearsal limit is an error document, refunded, and a full disk is a
 * 507 with a JSON body. The bombs are small on disk (about 200 KB) so a 2-core CI runs them.
 */

const OPENING = resolveConfig(DEFAULT_CONFIG).credits;
const INLINE_DEADLINE_MS = 2000;

/** One honest document by storage path (ticket and PUT, extract, polls to completed). */
async function storedDocument(serve: { url: string }, pdf: Buffer): Promise<void> {
  const ticket = await stored(serve, pdf, 'honest.pdf');
  const accepted = await call(serve, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
  expect(accepted.status).toBe(200);
  const doc = DocumentBody.parse((await waitForDocument(serve, accepted.body.document_id)).body);
  expect(doc.status).toBe('completed');
}

describe('hostile: bounded requests', () => {
  it('decompression bombs are stopped at the inline deadline, page counting included, and the engine workers are freed', async ({
    spawnServe,
  }) => {
    const dir = tempDir();
    const config = writeJson(dir, 'config.json', {
      ...DEFAULT_CONFIG,
      inline: { timeout_ms: INLINE_DEADLINE_MS, max_body_bytes: 10_000_000 },
      // A 256 MB engine process (its heap as much): the 140 MB cross-reference stream's 20 million
      // entries outgrow it in seconds, where under the shipped 512 MB heap the stored bomb ran to the
      // 30 s page-counting deadline. Either end is what is claimed: bounded, refunded (that deadline
      // itself is held in process by test/emulator/pages.test.ts).
      processing: { ms_per_page: 0, concurrency: 2, engine_memory_mb: 256 },
    });
    const serve = await spawnServe(['--config', config, '--data-dir', join(dir, 'data'), '--no-listen']);
    const bomb = await xrefBombPdf(20_000_000);
    expect(bomb.length).toBeLessThan(400_000);
    // Warm: an honest document by storage path first (the engine process it starts may take longer
    // than the 2 s inline deadline on a loaded machine; the processing deadline is 30 s), as the
    // one sent after the bombs will be. How long each step takes is not asserted (a loaded machine
    // moves it); what is claimed is the answers, the documents' ends and the ledger.
    await storedDocument(serve, await invoicePdf(4));
    const bombs = [1, 2].map(() => call(serve, 'POST', '/api/v1/extract', { body: inlineBody(bomb, 'bomb.pdf') }));
    const ticket = await stored(serve, bomb, 'bomb.pdf');
    const viaStorage = call(serve, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
    // Sent meanwhile: it may wait behind the bombs for a worker, but only until their deadline.
    const meanwhile = await call(serve, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(2)) });
    expect([200, 503]).toContain(meanwhile.status);
    for (const r of await Promise.all(bombs)) {
      // Stopped at the deadline (503), or refused as too large for the worker's heap (422): never charged.
      expect([422, 503]).toContain(r.status);
    }
    const accepted = await viaStorage;
    expect(accepted.status).toBe(200);
    const doc = DocumentBody.parse((await waitForDocument(serve, accepted.body.document_id)).body);
    expect(doc.status).toBe('error');
    expect(doc.error).toMatch(/took longer than 30000 ms|more memory than the engine allows/);
    // The workers were stopped, not left reading: the next honest document is read to completion
    // (by storage path, so a loaded machine's slow start of a fresh worker meets the processing
    // deadline, not the 2 s inline one).
    await storedDocument(serve, await invoicePdf(3));
    // The two stored honest documents, and the one sent meanwhile if it was read.
    const charged = 2 + (meanwhile.status === 200 ? 1 : 0);
    expect(await exactLedger(serve, OPENING)).toMatchObject({
      balance: OPENING - charged,
      sum: OPENING - charged,
      negative: 0,
    });
  });

  it('a stored file over the rehearsal limit (processing.max_file_bytes) is accepted, counted, then an error document, refunded: never a 422', async ({
    emulator,
  }) => {
    const s = await emulator({ processing: { ms_per_page: 0, concurrency: 1, max_file_bytes: 100_000 } });
    const big = Buffer.concat([await invoicePdf(3, 3), Buffer.alloc(200_000, 0x20)]);
    const ticket = await stored(s, big);
    const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
    expect(r.status).toBe(200);
    const doc = DocumentBody.parse((await waitForDocument(s, r.body.document_id)).body);
    expect(doc).toMatchObject({ status: 'error', page_count: 3 });
    expect(doc.error).toContain("over the emulator's rehearsal limit of 100000 bytes (processing.max_file_bytes");
    expect(doc.error).toContain('refunded');
    // Reserved at submission, refunded when it failed: the balance is whole again.
    const ledger = await exactLedger(s, OPENING);
    expect(ledger).toMatchObject({ balance: OPENING, sum: OPENING, negative: 0 });
    expect(ledger.entries.filter((e) => e.document_id === doc.document_id).map((e) => [e.kind, e.pages])).toEqual([
      ['reserve', 3],
      ['refund', 3],
    ]);
  });

  it('a full disk during a PUT is a 507 with a JSON body; the server goes on', async () => {
    // A real full disk: serve's data directory on a 2 MB tmpfs, in a private mount namespace.
    try {
      execFileSync('unshare', ['-rm', 'true']);
    } catch {
      throw new Error(
        'this test needs unshare(1) with user and mount namespaces (util-linux), to give serve a small disk',
      );
    }
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    const config = writeJson(dir, 'config.json', { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 1 } });
    writeFileSync(join(dir, 'run.sh'), 'mkdir -p "$1" && mount -t tmpfs -o size=2m tmpfs "$1" && shift && exec "$@"\n');
    const child = execa(
      'unshare',
      [
        '-rm',
        'sh',
        join(dir, 'run.sh'),
        dataDir,
        process.execPath,
        CLI,
        'serve',
        '--port',
        '0',
        '--no-listen',
        '--config',
        config,
        '--data-dir',
        dataDir,
      ],
      {
        env: cleanEnv(),
        extendEnv: false,
        reject: false,
        buffer: false,
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /Listening on (\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
        void child.then(() => reject(new Error(`serve exited before listening:\n${out}`)));
      });
      const s = { url };
      const t = await call(s, 'POST', '/api/v1/upload-url', {
        body: { file_name: 'big.pdf', file_type: 'application/pdf' },
      });
      const put = await call(s, 'PUT', t.body.upload_url, {
        raw: Buffer.concat([await invoicePdf(4), Buffer.alloc(4_000_000, 0x20)]),
        key: null,
        headers: { 'content-type': 'application/pdf' },
      });
      expect(put.status).toBe(507);
      expect(put.body).toMatchObject({ success: false, code: 'insufficient_storage' });
      expect(put.body.error).toContain('disk under the data directory is full');
      // The partial file was removed: a small document still fits, and is extracted.
      const ok = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(5)) });
      expect(ok.status).toBe(200);
    } finally {
      child.kill('SIGKILL');
      await child;
    }
  });
});
