import { describe, expect } from 'vitest';
import { DocumentBody } from '../../src/contract/index.ts';
import { EnginePool } from '../../src/engine/index.ts';
import { call, waitForDocument } from '../helpers/emulator.ts';
import { stored } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * The background queue gives waiting documents their turn by wall time: a long document's
 * simulated time (pages x ms_per_page) is the service's, not a licence to hold a place. Two long
 * multi-page PDFs submitted first must not keep a one-page document waiting until they end.
 * The real engine, a pool of two processes, as serve has.
 */

const LONG_PAGES = 100;
/** Each long document's simulated time: 100 pages x 300 ms, half a minute; a one-page one, 300 ms. */
const MS_PER_PAGE = 300;
const SLOW_MS = 200;

async function submit(s: { url: string }, bytes: Buffer, name: string): Promise<string> {
  const ticket = await stored(s, bytes, name);
  const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.document_id as string;
}

const statusOf = async (s: { url: string }, id: string) =>
  DocumentBody.parse((await call(s, 'GET', `/api/v1/documents/${id}`)).body).status;

describe('serve: the fair queue', () => {
  it('a one-page document submitted after two long ones completes while they are still processing', async ({
    emulator,
  }) => {
    const engine = new EnginePool({ workers: 2, slowMs: SLOW_MS });
    const s = await emulator(
      { credits: 10_000, processing: { ms_per_page: MS_PER_PAGE, concurrency: 2, slow_ms: SLOW_MS } },
      { engine },
    );
    try {
      const long = [
        await submit(s, await invoicePdf(1, LONG_PAGES), 'long-1.pdf'),
        await submit(s, await invoicePdf(2, LONG_PAGES), 'long-2.pdf'),
      ];
      const short = await submit(s, await invoicePdf(3), 'short.pdf');
      // Waited for as long as the long ones take to be simulated, and more: a queue that lets the
      // short one wait for them is seen finishing them first, not timing out.
      const done = DocumentBody.parse((await waitForDocument(s, short, undefined, 4 * LONG_PAGES * MS_PER_PAGE)).body);
      expect(done.status, done.error ?? '').toBe('completed');
      expect(done.results?.invoice_number).toBe('INV-00003');
      // Ordering, read through the API: when the one-page document is done, both long ones are not.
      for (const id of long) expect(await statusOf(s, id)).toBe('processing');
    } finally {
      // The server first, as serve stops: the long documents stay processing, then the engine goes.
      await s.close();
      await engine.close();
    }
  });
});
