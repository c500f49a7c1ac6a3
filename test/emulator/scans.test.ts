import { beforeAll, describe, expect } from 'vitest';
import {
  AppDocumentDetail,
  DocumentBody,
  ErrorBody,
  ExtractInlineResponse,
  LedgerBody,
  UploadTicket,
} from '../../src/contract/index.ts';
import { call, inlineBody, KEY, waitForDocument } from '../helpers/emulator.ts';
import { makePdf } from '../helpers/pdf.ts';
import { type Gray, grayPng, renderGray } from '../helpers/scan.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * A scan submitted to `serve` is read by OCR like a text PDF; when nothing could be read, the
 * emulator's own surface says why, and the public API's answer keeps the spec's shape.
 */
const OCR_MS = 120_000;
let invoice: Gray;
beforeAll(async () => {
  invoice = await renderGray(await makePdf([['Invoice number INV-1234', '', 'Total 99.50']]), 200);
}, OCR_MS);

describe('emulator: scans', () => {
  it(
    'a scanned PNG is read: values in the API, their boxes on /_emulator/documents/{id}, no notes',
    async ({ emulator }) => {
      const s = await emulator();
      const r = await call(s, 'POST', '/api/v1/extract', {
        body: inlineBody(await grayPng(invoice), 'scan.png', 'image/png'),
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const inline = ExtractInlineResponse.parse(r.body);
      expect(inline.results).toMatchObject({ invoice_number: 'INV-1234', total: 99.5 });
      const detail = AppDocumentDetail.parse(
        (await call(s, 'GET', `/_emulator/documents/${inline.document_id}`, { key: null })).body,
      );
      expect(detail.grounding?.total?.page).toBe(1);
      expect(detail.notes).toEqual([]);
    },
    OCR_MS,
  );

  it(
    'a blank scan: every field null, and the emulator says why; the API says nothing of it',
    async ({ emulator }) => {
      const s = await emulator();
      const blank = await grayPng({ ...invoice, pixels: new Uint8Array(invoice.pixels.length).fill(255) });
      const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(blank, 'blank.png', 'image/png') });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const inline = ExtractInlineResponse.parse(r.body);
      expect(Object.values(inline.results).every((v) => v === null || typeof v === 'object')).toBe(true);
      expect(inline.results.total).toBeNull();
      const api = await waitForDocument(s, inline.document_id);
      for (const text of [JSON.stringify(r.body), JSON.stringify(api.body)]) expect(text).not.toMatch(/notes|OCR/);
      const detail = AppDocumentDetail.parse(
        (await call(s, 'GET', `/_emulator/documents/${inline.document_id}`, { key: null })).body,
      );
      expect(detail.status).toBe('completed');
      expect(detail.notes).toEqual([expect.stringMatching(/page 1 has no text layer, and OCR found no words/)]);
    },
    OCR_MS,
  );

  it(
    'a PNG whose header claims 30000×30000 pixels, which OCR refuses: an error that says why, refunded, on both routes',
    async ({ emulator }) => {
      const s = await emulator();
      // A real PNG (one row of white, checksums and all) whose image header is then made to claim
      // 30000×30000: its page is counted (1) from the header, and OCR refuses it before decoding.
      const huge = Buffer.from(await grayPng({ width: 8, height: 8, pixels: new Uint8Array(64).fill(255) }));
      huge.writeUInt32BE(30_000, 16);
      huge.writeUInt32BE(30_000, 20);
      const reason = /30000×30000 pixels, more than OCR reads .*scan it at 300 dpi/;

      const inline = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(huge, 'huge.png', 'image/png') });
      expect(inline.status, JSON.stringify(inline.body)).toBe(422);
      expect(ErrorBody.parse(inline.body).error).toMatch(reason);

      const t = await call(s, 'POST', '/api/v1/upload-url', {
        body: { file_name: 'huge.png', file_type: 'image/png' },
        key: KEY,
      });
      const ticket = UploadTicket.parse(t.body);
      await call(s, 'PUT', ticket.upload_url, { raw: huge, key: null, headers: { 'content-type': 'image/png' } });
      const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const doc = DocumentBody.parse((await waitForDocument(s, r.body.document_id)).body);
      expect(doc.status).toBe('error');
      expect(doc.error).toMatch(reason);
      expect(doc.results).toBeNull();
      const detail = AppDocumentDetail.parse(
        (await call(s, 'GET', `/_emulator/documents/${doc.document_id}`, { key: null })).body,
      );
      // A pixel ceiling, not the engine's memory limit.
      expect(detail.notes.join(' ')).not.toMatch(/engine_memory_mb/);

      // Whatever was reserved was given back: nothing charged for a document nothing was read from.
      const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
      expect(ledger.balance).toBe(1000);
    },
    OCR_MS,
  );
});
