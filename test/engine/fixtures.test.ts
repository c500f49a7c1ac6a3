import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mirrorsDefinition } from '../../src/contract/index.ts';
import { EngineError, type EngineOutput } from '../../src/engine/index.ts';
import { countPagesInProcess, extractInProcess } from '../../src/engine/extract.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { type ReadFixture, evaluate, formatReport } from '../../fixtures/eval.ts';
import { invoiceFixtures } from '../../fixtures/lib/invoices.ts';
import { FIXTURES_DIR, loadFixtures } from '../../fixtures/lib/manifest.ts';
import { encryptedPdf, imageOnlyPdf } from '../../fixtures/lib/others.ts';
import { renderPdf } from '../../fixtures/lib/pdf.ts';
import { precision, totals } from '../../fixtures/lib/score.ts';

const { fields, fixtures } = loadFixtures();

/**
 * Each fixture read once (OCR of the scans is seconds each): its own test checks the reading,
 * and the eval's score is taken over the same readings.
 */
const readings = new Map<string, Promise<EngineOutput>>();
const readOnce: ReadFixture = (f, definition) => {
  let reading = readings.get(f.file);
  if (reading === undefined) {
    reading = extractInProcess({ bytes: f.bytes, mimeType: f.mime, fields: definition });
    // A fixture that must fail is awaited by its test and by the eval; this only keeps it from being unhandled meanwhile.
    reading.catch(() => {});
    readings.set(f.file, reading);
  }
  return reading;
};

describe('engine fixtures', () => {
  it('engine: the fixtures parser is exactly the default Invoices definition', () => {
    expect(JSON.parse(readFileSync(join(FIXTURES_DIR, 'parsers/invoices.json'), 'utf8'))).toEqual(INVOICE_FIELDS);
    expect(fields).toEqual(INVOICE_FIELDS);
  });

  it('engine: has at least 15 invoices and the other kinds of document', () => {
    expect(fixtures.filter((f) => f.file.startsWith('invoices/')).length).toBeGreaterThanOrEqual(15);
    for (const ext of ['.txt', '.png', '.tiff', 'image-only.pdf', 'encrypted.pdf', 'corrupt.pdf']) {
      expect(
        fixtures.some((f) => f.file.endsWith(ext)),
        ext,
      ).toBe(true);
    }
  });

  for (const f of fixtures) {
    it(`engine: reads ${f.file} as expected, field by field`, async () => {
      const outcome = f.outcome;
      if ('error' in outcome) {
        await expect(readOnce(f, fields)).rejects.toMatchObject({ code: outcome.error });
        return;
      }
      const out = await readOnce(f, fields);
      expect(out.pageCount).toBe(outcome.pages);
      expect(await countPagesInProcess(f.bytes, f.mime)).toBe(outcome.pages);
      expect(mirrorsDefinition(fields, out.results)).toEqual({ ok: true });
      expect(mirrorsDefinition(fields, outcome.results)).toEqual({ ok: true });
      for (const key of Object.keys(outcome.results)) expect(out.results[key], key).toEqual(outcome.results[key]);
    });
  }

  it('engine: eval precision is 100% over all fixtures', async () => {
    const report = await evaluate(readOnce);
    expect(report.problems, formatReport(report)).toEqual([]);
    expect(precision(totals(report.score)), formatReport(report)).toBe(1);
  });

  it('engine: the committed fixtures are what the generator draws, byte for byte', async () => {
    for (const f of invoiceFixtures()) {
      const bytes = await renderPdf(f.pages, f.pdf);
      expect(Buffer.compare(bytes, readFileSync(join(FIXTURES_DIR, `invoices/${f.name}.pdf`))), f.name).toBe(0);
      expect(JSON.parse(readFileSync(join(FIXTURES_DIR, `invoices/${f.name}.expected.json`), 'utf8'))).toEqual(
        f.expected,
      );
    }
    expect(Buffer.compare(await imageOnlyPdf(), await imageOnlyPdf())).toBe(0);
    expect(Buffer.compare(await encryptedPdf(), readFileSync(join(FIXTURES_DIR, 'other/encrypted.pdf')))).toBe(0);
  });

  it('engine: gives the same output bytes for the same input', async () => {
    const f = fixtures.find((x) => x.file.includes('06-table'));
    if (!f) throw new Error('fixture missing');
    const a = await extractInProcess({ bytes: f.bytes, mimeType: f.mime, fields });
    const b = await extractInProcess({ bytes: f.bytes, mimeType: f.mime, fields });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });
});

describe('engine errors', () => {
  const extract = (bytes: Uint8Array, mimeType: string) => extractInProcess({ bytes, mimeType, fields });

  it('engine: an empty document is "empty"', async () => {
    await expect(extract(new Uint8Array(), 'application/pdf')).rejects.toMatchObject({ code: 'empty' });
  });

  it('engine: an encrypted PDF is "encrypted" and says what to do', async () => {
    const e = await extract(await encryptedPdf(), 'application/pdf').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EngineError);
    expect(e).toMatchObject({ code: 'encrypted', message: expect.stringMatching(/password.*submit it again/) });
  });

  it('engine: a damaged PDF, or bytes that are not the declared type, are "corrupt"', async () => {
    await expect(extract(new TextEncoder().encode('%PDF-1.7\nnot really'), 'application/pdf')).rejects.toMatchObject({
      code: 'corrupt',
    });
    await expect(extract(new TextEncoder().encode('hello'), 'application/pdf')).rejects.toMatchObject({
      code: 'corrupt',
    });
    await expect(
      extract(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]), 'image/png'),
    ).rejects.toMatchObject({ code: 'corrupt' });
    await expect(extract(new Uint8Array([0x49, 0x49, 0x2a, 0, 0xff, 0xff, 0, 0]), 'image/tiff')).rejects.toMatchObject({
      code: 'corrupt',
    });
  });

  it('engine: an unsupported type is "unsupported_type" and names what is read', async () => {
    const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]);
    await expect(
      extract(zip, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'),
    ).rejects.toMatchObject({
      code: 'unsupported_type',
      message: expect.stringContaining('PDF, PNG, JPEG, TIFF'),
    });
    await expect(extract(zip, 'application/octet-stream')).rejects.toMatchObject({ code: 'unsupported_type' });
  });

  it('engine: reads text sent as octet-stream, and refuses a JPEG with no picture in it as corrupt', async () => {
    const out = await extract(new TextEncoder().encode('Total: 5.00'), 'application/octet-stream');
    expect(out.results.total).toBe(5);
    // Scans are read by OCR (test/engine/scans.test.ts): a JPEG without a frame header has nothing to read.
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0xff, 0xd9]);
    await expect(extract(jpeg, 'image/jpeg')).rejects.toMatchObject({ code: 'corrupt', message: /no frame header/ });
  });
});
