import { afterAll, describe, expect, it } from 'vitest';
import {
  SAMPLE_STEP,
  type ScanScore,
  formatScans,
  scoreScanFile,
  scanOnlyWrong,
  scanSample,
} from '../../fixtures/lib/scans.ts';
import { blankFieldsScore } from '../../fixtures/lib/fields.ts';
import { closeOcr } from '../../src/engine/ocr.ts';
import { makePdf } from '../helpers/pdf.ts';
import { Sheet, renderPdf } from '../../fixtures/lib/pdf.ts';

/**
 * `npm run eval`'s scans (fixtures/lib/scans.ts): a PDF rendered at run time into a PDF of
 * images, read back through OCR and scored beside its text layer. Tested on PDFs the test
 * draws, never the corpus. How a scan is made and read through OCR is in
 * test/engine/scans.test.ts, beside the other OCR tests (the recogniser loads once); here, the
 * sample and the scoring, on text PDFs.
 */

const OCR_MS = 120_000;
afterAll(() => closeOcr());

describe('the corpus read as scans', () => {
  it('the default sample is a fixed one, every SAMPLE_STEP-th invoice in name order; --scans reads all', () => {
    const files = Array.from({ length: 25 }, (_, i) => `inv-${String(i).padStart(2, '0')}.pdf`);
    const shuffled = [...files].reverse();
    expect(scanSample(shuffled, false)).toEqual(files.filter((_, i) => i % SAMPLE_STEP === 0));
    expect(scanSample(shuffled, false)).toEqual(scanSample(files, false));
    expect(scanSample(shuffled, true)).toEqual(files);
  });

  it('prints per field right / wrong / null from the text beside the scan, the recall ratio, and every wrong scan value', () => {
    const side = () => ({
      every: blankFieldsScore(),
      three: { right: 0, wrong: 0, null: 0, sign: 0, unprinted: 0, scored: 0 },
      wrong: [] as ScanScore['scan']['wrong'],
      unprinted: [] as ScanScore['scan']['unprinted'],
      pages: 2,
      ms: 4000,
    });
    const s: ScanScore = { files: ['a.pdf'], text: side(), scan: side() };
    Object.assign(s.text.every.all, { right: 8, wrong: 0, null: 2, scored: 10 });
    Object.assign(s.scan.every.all, { right: 6, wrong: 1, null: 3, scored: 10 });
    Object.assign(s.text.every.fields.total, { right: 1, scored: 1 });
    Object.assign(s.scan.every.fields.total, { wrong: 1, scored: 1 });
    s.scan.wrong.push({ file: 'a.pdf', key: 'total', expected: [99.5], actual: 99.8 });
    s.scan.wrong.push({ file: 'b.pdf', key: 'tax', expected: [1], actual: 2, alsoText: true });
    expect(scanOnlyWrong(s).map((w) => w.file)).toEqual(['a.pdf']);
    const out = formatScans(s, false);
    expect(out).toMatch(/^ALL FIELDS\s+8\s+0\s+2\s+6\s+1\s+3\s+0\.75$/m);
    expect(out).toMatch(/^total\s+1\s+0\s+0\s+0\s+1\s+0\s+0\.00$/m);
    expect(out).toContain('scan recall / text recall, all fields: 0.75 (target >= 0.6, 0 wrong)');
    expect(out).toContain('WRONG scan a.pdf: total expected [99.5], got 99.8');
    expect(out).toContain('WRONG scan b.pdf: tax expected [1], got 2 (the text layer gives the same');
    expect(out).toContain('--scans reads all');
  });

  it(
    'a value whose truth the PDF does not print, where the value read is, is unprinted on both sides, not wrong, and listed',
    async () => {
      // The XML says 120.00; the print says 99.50 and nothing else: the engine reads what is printed.
      const pdf = new Uint8Array(await makePdf([['Invoice Number: INV-1234', 'Total: 99.50']]));
      const blank = () => ({
        every: blankFieldsScore(),
        three: { right: 0, wrong: 0, null: 0, sign: 0, unprinted: 0, scored: 0 },
        wrong: [] as ScanScore['scan']['wrong'],
        unprinted: [] as ScanScore['scan']['unprinted'],
        pages: 0,
        ms: 0,
      });
      const s: ScanScore = { files: ['a.pdf'], text: blank(), scan: blank() };
      // The scan side reads the same bytes (no OCR here): the scorer is what is tested.
      await scoreScanFile(s, 'a.pdf', pdf, pdf.slice(), undefined, { total: [120], 'vendor.name': ['Other Co'] });
      for (const side of [s.text, s.scan]) {
        expect(side.every.fields.total).toMatchObject({ right: 0, wrong: 0, unprinted: 1, scored: 1 });
        expect(side.every.fields['vendor.name']).toMatchObject({ null: 1, scored: 1 });
        expect(side.wrong).toEqual([]);
      }
      expect(scanOnlyWrong(s)).toEqual([]);
      const out = formatScans(s, false);
      expect(out).toContain('unprinted  scan a.pdf: total expected [120] (not printed), gave 99.5 (printed)');
      expect(out).not.toContain('WRONG');
    },
    OCR_MS,
  );

  it(
    'a line item whose quantity × unit price is not its line amount is a wrong value on either side, and fails the scan sample',
    async () => {
      // A table with no amount column: only the XML's line amounts (fields.json) can tell a price misread.
      const sheet = (price: string) => {
        const t = new Sheet();
        t.text(50, 50, 'Invoice Number: INV-1234');
        t.text(50, 120, 'Description', { bold: true })
          .right(330, 120, 'Qty', { bold: true })
          .right(440, 120, 'Unit Price', { bold: true });
        t.text(50, 142, 'Nougat 250g').right(330, 142, '8').right(440, 142, price);
        t.text(50, 160, 'Biscuits 300g').right(330, 160, '20').right(440, 160, '3.20');
        return t;
      };
      const right = new Uint8Array(await renderPdf([sheet('4.55')]));
      const misread = new Uint8Array(await renderPdf([sheet('455.00')]));
      const blank = () => ({
        every: blankFieldsScore(),
        three: { right: 0, wrong: 0, null: 0, sign: 0, unprinted: 0, scored: 0 },
        wrong: [] as ScanScore['scan']['wrong'],
        unprinted: [] as ScanScore['scan']['unprinted'],
        pages: 0,
        ms: 0,
      });
      const s: ScanScore = { files: ['a.pdf'], text: blank(), scan: blank() };
      // The "scan" is a text PDF that prints the misread: the scorer is what is tested.
      await scoreScanFile(s, 'a.pdf', right, misread, undefined, { 'line_items.amount': [36.4, 64] });
      expect(s.text.wrong).toEqual([]);
      expect(scanOnlyWrong(s)).toEqual([
        {
          file: 'a.pdf',
          key: 'line_items[0] (inconsistent)',
          expected: 36.4,
          actual: 'line_items[0] quantity 8 × unit_price 455 is not amount 36.4 (inconsistent)',
        },
      ]);
    },
    OCR_MS,
  );
});
