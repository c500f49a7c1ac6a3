import { describe, expect } from 'vitest';
import { AppDocumentDetail, ExtractInlineResponse } from '../../src/contract/index.ts';
import { tempDir } from '../helpers/cli.ts';
import { call, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Where each value was found (page and box) is kept on the document and served only on the
 * emulator's own surface, never in the public API's results.
 */
describe('emulator: grounding of values', () => {
  it('keeps page and box per value on /_emulator/documents/{id}, never in the API', async ({ emulator }) => {
    const dataDir = tempDir('extract-grounding-');
    let s = await emulator({}, { dataDir });
    const pdf = await invoicePdf(3);
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(pdf) });
    expect(r.status).toBe(200);
    const inline = ExtractInlineResponse.parse(r.body);
    expect(inline.results.total).toBe(103);
    const id = inline.document_id;
    const api = await waitForDocument(s, id);
    for (const text of [JSON.stringify(r.body), JSON.stringify(api.body)]) {
      expect(text).not.toContain('grounding');
      expect(text).not.toContain('"box"');
    }

    const detail = AppDocumentDetail.parse((await call(s, 'GET', `/_emulator/documents/${id}`, { key: null })).body);
    expect(detail.grounding?.total).toMatchObject({ page: 1 });
    expect(detail.grounding?.invoice_number?.box[0]).toBeGreaterThanOrEqual(49);
    // Only values that were found are placed.
    expect(detail.grounding?.due_date).toBeUndefined();
    for (const place of Object.values(detail.grounding ?? {})) {
      const [x0, top, x1, bottom] = place.box;
      expect(x1).toBeGreaterThan(x0);
      expect(bottom).toBeGreaterThan(top);
    }

    // The stored bytes, for the page view, with a sandbox: the file is shown, never run.
    const file = await fetch(`${s.url}${detail.file_url}`);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toBe('inline');
    expect(file.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.compare(Buffer.from(await file.arrayBuffer()), pdf)).toBe(0);

    // Kept on the document: the same after a restart on the same data directory.
    await s.close();
    s = await emulator({}, { dataDir });
    const again = AppDocumentDetail.parse((await call(s, 'GET', `/_emulator/documents/${id}`, { key: null })).body);
    expect(again.grounding).toEqual(detail.grounding);
  });

  it('serves a stored file of another type as an attachment, never inline', async ({ emulator }) => {
    const s = await emulator();
    const html = Buffer.from('<html><script>alert(1)</script>Total: 5.00</html>');
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(html, 'page.html', 'text/html') });
    expect(r.status).toBe(200);
    const id = ExtractInlineResponse.parse(r.body).document_id;
    const file = await fetch(`${s.url}/_emulator/documents/${id}/file`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/octet-stream');
    expect(file.headers.get('content-disposition')).toBe('attachment');
    expect(file.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await call(s, 'GET', '/_emulator/documents/doc_nope/file', { key: null })).status).toBe(404);
  });
});
