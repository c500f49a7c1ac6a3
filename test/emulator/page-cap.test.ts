import { describe, expect } from 'vitest';
import { DEFAULT_MAX_PAGES } from '../../src/contract/constants.ts';
import { DocumentBody } from '../../src/contract/index.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { tempDir } from '../helpers/cli.ts';
import { call, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { exactLedger, formOf, postForm, stored } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * processing.max_pages, the rehearsal cap on one document's pages: a document over it is refused
 * clearly, naming the cap and how to raise it, and nobody pays for it. At submission, where its
 * pages are counted (every route); and a document accepted under a higher cap, resumed after a
 * restart with a lower one, ends in error, refunded.
 */

const OPENING = resolveConfig(DEFAULT_CONFIG).credits;
const CAP_TEXT =
  /has 4 pages, over the emulator's rehearsal cap of 3 pages per document \(processing\.max_pages;.*raise processing\.max_pages/;

async function storedExtract(s: { url: string }, bytes: Buffer, name: string): Promise<string> {
  const ticket = await stored(s, bytes, name);
  const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.document_id as string;
}

describe('serve: processing.max_pages', () => {
  it('defaults to 10,000 pages', () => {
    expect(DEFAULT_MAX_PAGES).toBe(10_000);
    expect(resolveConfig(DEFAULT_CONFIG).processing.max_pages).toBe(DEFAULT_MAX_PAGES);
  });

  it('a document over the cap is refused where its pages are counted, on every route, and nothing is charged', async ({
    emulator,
  }) => {
    const s = await emulator({ processing: { ms_per_page: 0, concurrency: 2, max_pages: 3 } });
    const four = await invoicePdf(4, 4);

    const inline = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(four) });
    expect(inline.status).toBe(422);
    expect(inline.body.error).toMatch(CAP_TEXT);
    expect(inline.body.error).toMatch(/nothing was charged$/);

    const app = await postForm(
      `${s.url}/_emulator/parsers/prs_invoices/documents`,
      formOf([{ name: 'four.pdf', bytes: four }]),
    );
    expect(app.status).toBe(422);
    expect(app.body.error).toMatch(CAP_TEXT);

    // The storage path is accepted as the spec says, then fails through the document, uncharged.
    const doc = DocumentBody.parse((await waitForDocument(s, await storedExtract(s, four, 'four.pdf'))).body);
    expect(doc.status).toBe('error');
    expect(doc.error).toMatch(CAP_TEXT);

    expect(await exactLedger(s, OPENING)).toMatchObject({ balance: OPENING, sum: OPENING, entries: [] });

    // At the cap: read and charged as any other.
    const three = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(3, 3)) });
    expect(three.status, JSON.stringify(three.body)).toBe(200);
    expect(await exactLedger(s, OPENING)).toMatchObject({ balance: OPENING - 3, sum: OPENING - 3, negative: 0 });
  });

  it('a document accepted under a higher cap and resumed under a lower one ends in error, refunded', async ({
    emulator,
  }) => {
    const dataDir = tempDir();
    // Its simulated time never ends: it is still processing when the server stops.
    const first = await emulator(
      { processing: { ms_per_page: 1, concurrency: 2 } },
      { dataDir, deps: { sleep: () => new Promise<void>(() => {}) } },
    );
    const id = await storedExtract(first, await invoicePdf(5, 4), 'four.pdf');
    expect(DocumentBody.parse((await call(first, 'GET', `/api/v1/documents/${id}`)).body).status).toBe('processing');
    expect((await exactLedger(first, OPENING)).balance).toBe(OPENING - 4);
    await first.close();

    const second = await emulator({ processing: { ms_per_page: 0, concurrency: 2, max_pages: 3 } }, { dataDir });
    const doc = DocumentBody.parse((await waitForDocument(second, id)).body);
    expect(doc.status).toBe('error');
    expect(doc.error).toMatch(CAP_TEXT);
    expect(doc.error).toMatch(/the credits were refunded$/);
    const ledger = await exactLedger(second, OPENING);
    expect(ledger).toMatchObject({ balance: OPENING, sum: OPENING, negative: 0 });
    expect(ledger.entries.map((e) => [e.kind, e.pages, e.document_id])).toEqual([
      ['reserve', 4, id],
      ['refund', 4, id],
    ]);
  });
});
