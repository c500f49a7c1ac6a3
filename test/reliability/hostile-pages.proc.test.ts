import { describe, expect } from 'vitest';
import { DocumentBody, MAX_BALANCE_PAGES, type Results } from '../../src/contract/index.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { MAX_ATTEMPTS } from '../../src/emulator/processor.ts';
import { openStore } from '../../src/emulator/store.ts';
import type { Engine } from '../../src/engine/types.ts';
import { tempDir, writeJson } from '../helpers/cli.ts';
import { call, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { exactLedger, formOf, pdfClaimingPages, postForm, stored } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Page counts and background failures: a document's page tree is the sender's to
 * write, so its page count is checked before it reaches the ledger, and nothing that goes wrong
 * in the background takes the server down or loops across restarts.
 */

const OPENING = resolveConfig(DEFAULT_CONFIG).credits;

describe('hostile: page counts', () => {
  it('a PDF claiming -1000000 or 0 pages is refused (422) on every route, and the ledger never moves', async ({
    emulator,
  }) => {
    const s = await emulator();
    for (const count of [-1_000_000, 0]) {
      const pdf = await pdfClaimingPages(count);
      const inline = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(pdf) });
      expect(inline.status).toBe(422);
      expect(inline.body.error).toMatch(/declares -?\d+ pages/);
      const app = await postForm(
        `${s.url}/_emulator/parsers/prs_invoices/documents`,
        formOf([{ name: 'bomb.pdf', bytes: pdf }]),
      );
      expect(app.status).toBe(422);
      const inbound = await call(s, 'POST', s.inboundUrls.get('prs_invoices')!, { key: null, body: inlineBody(pdf) });
      expect(inbound.status).toBe(422);
      // The storage-path shape is accepted, then fails through the document, uncharged.
      const ticket = await stored(s, pdf);
      const ex = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
      expect(ex.status).toBe(200);
      const doc = DocumentBody.parse((await waitForDocument(s, ex.body.document_id)).body);
      expect(doc.status).toBe('error');
      expect(doc.error).toMatch(/declares -?\d+ pages/);
    }
    const ledger = await exactLedger(s, OPENING);
    expect(ledger.entries).toHaveLength(0);
    expect(ledger.balance).toBe(OPENING);
    // The server still extracts an honest document.
    expect((await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(1)) })).status).toBe(200);
    expect((await exactLedger(s, OPENING)).balance).toBe(OPENING - 1);
  });

  it('a page count above the byte size is refused (422), whatever the engine says', async ({
    emulator,
    sharedEngine,
  }) => {
    // The file's engine (one warm process for all its tests) with a page count no PDF of these bytes has.
    const real = sharedEngine;
    const engine: Engine = {
      countPages: async () => 1_000_000_000,
      extract: (i) => real.extract(i),
      close: async () => {},
    };
    const s = await emulator({}, { engine });
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(9)) });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatch(/declares 1000000000 pages in \d+ bytes/);
    expect(await exactLedger(s, OPENING)).toMatchObject({ balance: OPENING, negative: 0 });
  });
  // A child serve given the bomb through the app route with no key, and restarted on its data
  // directory: part of the last test of 'background failures' below (one serve's life for both).
});

/** An engine that counts honestly but whose extraction yields something the emulator cannot store. */
function engineWith(real: Engine, extract: Engine['extract']): Engine {
  return { countPages: (b, m) => real.countPages(b, m), extract, close: async () => {} };
}

describe('hostile: background failures', () => {
  it('a failure while storing a result fails that document with a refund, and the server goes on', async ({
    emulator,
    sharedEngine,
  }) => {
    const logs: string[] = [];
    // Results that throw when stored (JSON.stringify reads the getter): a stand-in for any bug of ours there.
    const unstorable: Results = JSON.parse('{}');
    Object.defineProperty(unstorable, 'invoice_number', {
      enumerable: true,
      get: () => {
        throw new Error('this value cannot be stored');
      },
    });
    const engine = engineWith(sharedEngine, async () => ({ pageCount: 1, results: unstorable, grounding: {} }));
    const s = await emulator({}, { engine, log: (line) => logs.push(line) });
    const ticket = await stored(s, await invoicePdf(3));
    const ex = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
    expect(ex.status).toBe(200);
    const doc = DocumentBody.parse((await waitForDocument(s, ex.body.document_id)).body);
    expect(doc.status).toBe('error');
    expect(doc.error).toContain('refunded');
    const inline = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(4)) });
    expect(inline.status).toBe(500);
    expect(inline.body.error).toContain('refunded');
    const ledger = await exactLedger(s, OPENING);
    expect(ledger.balance).toBe(OPENING);
    expect(ledger.entries.filter((e) => e.kind === 'refund')).toHaveLength(2);
    expect(logs.join('\n')).toContain('internal error while finishing');
    expect((await call(s, 'GET', '/_emulator/health', { key: null })).status).toBe(200);
  });

  it('an extraction whose page count disagrees with the count charged is failed and refunded', async ({
    emulator,
    sharedEngine,
  }) => {
    const engine = engineWith(sharedEngine, async () => ({ pageCount: -1_000_000, results: {}, grounding: {} }));
    const s = await emulator({}, { engine });
    const inline = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(5)) });
    expect(inline.status).toBe(422);
    expect(inline.body.error).toContain('-1000000 pages during extraction');
    expect(await exactLedger(s, OPENING)).toMatchObject({ balance: OPENING, negative: 0 });
  });

  it(`a child serve survives a page-count bomb through the app route with no key; a document that keeps stopping it is failed after ${MAX_ATTEMPTS} starts, not re-queued forever`, async ({
    spawnServe,
  }) => {
    const dir = tempDir();
    // Each page takes a minute of simulated time, so the document is always processing when serve is killed.
    const config = writeJson(dir, 'config.json', {
      ...DEFAULT_CONFIG,
      processing: { ms_per_page: 60_000, concurrency: 1 },
    });
    const dataDir = `${dir}/data`;
    let serve = await spawnServe(['--config', config, '--data-dir', dataDir, '--no-listen']);
    // The bomb through the app route (no key): refused, and the process goes on answering and taking work.
    const bomb = await postForm(
      `${serve.url}/_emulator/parsers/prs_invoices/documents`,
      formOf([{ name: 'bomb.pdf', bytes: await pdfClaimingPages(-1_000_000) }]),
    );
    expect(bomb.status).toBe(422);
    const ticket = await stored(serve, await invoicePdf(6));
    const ex = await call(serve, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
    expect(ex.status).toBe(200);
    const id = ex.body.document_id as string;
    for (let start = 1; start <= MAX_ATTEMPTS; start++) {
      expect(DocumentBody.parse((await call(serve, 'GET', `/api/v1/documents/${id}`)).body).status).toBe('processing');
      serve.child.kill('SIGKILL');
      await serve.child;
      serve = await spawnServe(['--config', config, '--data-dir', dataDir, '--no-listen']);
      expect((await call(serve, 'GET', '/_emulator/health', { key: null })).status).toBe(200);
      // Restarted on its data directory: the document's one page reserved, nothing of the bomb.
      if (start === 1)
        expect(await exactLedger(serve, OPENING)).toMatchObject({
          balance: OPENING - 1,
          sum: OPENING - 1,
          negative: 0,
        });
    }
    const doc = DocumentBody.parse((await waitForDocument(serve, id)).body);
    expect(doc.status).toBe('error');
    expect(doc.error).toContain(`interrupted ${MAX_ATTEMPTS} times`);
    expect(await exactLedger(serve, OPENING)).toMatchObject({ balance: OPENING, sum: OPENING, negative: 0 });
  });
});

describe('hostile: ledger bounds', () => {
  it('top-ups are bounded, so the balance can never overflow', async ({ emulator }) => {
    // Opening 2.5 top-ups below the maximum (999 top-ups from the default opening reached the same
    // place through 999 requests): two more fit, one that lands on the maximum exactly fits, and
    // then nothing does.
    const opening = MAX_BALANCE_PAGES - 2_500_000_000;
    const s = await emulator({ credits: opening });
    const huge = await call(s, 'POST', '/_emulator/credits', { key: null, body: { pages: Number.MAX_SAFE_INTEGER } });
    expect(huge.status).toBe(400);
    expect(huge.body.error).toMatch(/at most 1000000000 pages/);
    for (let i = 0; i < 2; i++) {
      const r = await call(s, 'POST', '/_emulator/credits', { key: null, body: { pages: 1_000_000_000 } });
      expect(r.status).toBe(200);
    }
    const over = await call(s, 'POST', '/_emulator/credits', { key: null, body: { pages: 1_000_000_000 } });
    expect(over.status).toBe(400);
    expect(over.body.error).toContain("past the emulator's maximum");
    const toTheTop = await call(s, 'POST', '/_emulator/credits', { key: null, body: { pages: 500_000_000 } });
    expect(toTheTop.status).toBe(200);
    expect((await call(s, 'POST', '/_emulator/credits', { key: null, body: { pages: 1 } })).status).toBe(400);
    // Every later extract and ledger read still works.
    expect((await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(7)) })).status).toBe(200);
    const ledger = await exactLedger(s, opening);
    expect(ledger.balance).toBe(ledger.sum);
    expect(ledger.balance).toBe(MAX_BALANCE_PAGES - 1);
  });

  it('the database itself refuses a negative or absurd ledger entry', () => {
    const store = openStore({ inMemory: true });
    try {
      const insert = store.db.prepare("INSERT INTO ledger (kind, document_id, pages, at) VALUES ('reserve', ?, ?, 0)");
      expect(() => insert.run('doc_a', -1_000_000)).toThrow(/out of range|CHECK/);
      expect(() => insert.run('doc_b', 2 ** 53)).toThrow(/out of range|CHECK/);
      expect(insert.run('doc_c', 3).changes).toBe(1);
    } finally {
      store.close();
    }
  });
});
