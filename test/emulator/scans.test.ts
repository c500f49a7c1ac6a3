import { beforeAll, describe, expect, it } from 'vitest';
import { AppDocumentDetail, ExtractInlineResponse } from '../../src/contract/index.ts';
import { call, emulator, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { makePdf } from '../helpers/pdf.ts';
import { type Gray, grayPng, renderGray } from '../helpers/scan.ts';

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
    async () => {
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
    async () => {
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
});
