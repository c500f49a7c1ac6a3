import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/index.ts';
import { EngineError, EnginePool } from '../../src/engine/index.ts';
import { extractInProcess } from '../../src/engine/extract.ts';
import { closeOcr } from '../../src/engine/ocr.ts';
import { OCR_MAX_PAGES, dropDoubtful, readImage } from '../../src/engine/scan.ts';
import { scanOf } from '../../fixtures/lib/scans.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { openPdf, readPdf } from '../../src/engine/pdf-text.ts';
import { makePdf } from '../helpers/pdf.ts';
import { type Gray, grayPng, grayTiff, renderGray } from '../helpers/scan.ts';

/**
 * Scans read by OCR (README: Guarantees): images the test renders from a tiny PDF it builds,
 * never the corpus. OCR is 5–9 s a page on a loaded 2-core machine: generous time-outs. One file
 * for them all, so that the recogniser (three languages, about two CPU-seconds to load) loads once.
 */

const OCR_MS = 120_000;
const DPI = 200;
let invoice: Gray;
let other: Gray;
let blank: Gray;
/** The invoice as a PNG, made once: the PNG test, the refusal's yardstick and the worker test read it. */
let png: Buffer;

beforeAll(async () => {
  // A6 pages, a receipt's size: OCR's work grows with the pixels, and an A4 page has four times as many.
  invoice = await renderGray(await makePdf([['Invoice number INV-1234', '', 'Total 99.50']], 'A6'), DPI);
  other = await renderGray(await makePdf([['Delivery note', '', 'Thank you for your order']], 'A6'), DPI);
  blank = { ...invoice, pixels: new Uint8Array(invoice.pixels.length).fill(255) };
  png = await grayPng(invoice);
}, OCR_MS);
afterAll(() => closeOcr());

const read = async (bytes: Uint8Array, mimeType: string) =>
  extractInProcess({ bytes, mimeType, fields: INVOICE_FIELDS });

/**
 * The eval's scan (fixtures/lib/scans.ts scanOf) of a two-page A6 invoice, read in process once: an
 * image-only PDF, which the engine renders at 300 dpi for OCR. The image-PDF test checks its boxes,
 * the scanOf test its pages (a second image-only PDF cost another OCR'd page for the same claims).
 */
let scanRead: Promise<{ scan: Uint8Array; out: Awaited<ReturnType<typeof read>> }> | undefined;
const scanInProcess = () => {
  scanRead ??= (async () => {
    const original = await makePdf([['Invoice number INV-1234', '', 'Total 99.50'], ['Terms: 30 days']], 'A6');
    const scan = new Uint8Array(await scanOf(new Uint8Array(original)));
    return { scan, out: await read(scan, 'application/pdf') };
  })();
  return scanRead;
};

/** The PNG read in process, once: the first test checks it, the worker test compares its own reading with it. */
let pngRead: ReturnType<typeof read> | undefined;
const pngInProcess = () => {
  pngRead ??= read(png, 'image/png');
  return pngRead;
};

describe('scans read by OCR', () => {
  it(
    'a PNG: the invoice number and total read, boxed in the image pixels where they stand',
    async () => {
      const out = await pngInProcess();
      expect(out.pageCount).toBe(1);
      expect(out.results).toMatchObject({ invoice_number: 'INV-1234', total: 99.5 });
      const box = out.grounding.total?.box;
      // "Total 99.50" is the third line of a page at 50 pt from the top-left, here at 200 dpi.
      expect(out.grounding.total?.page).toBe(1);
      expect(box?.[0]).toBeGreaterThan(100);
      expect(box?.[0]).toBeLessThan(300);
      expect(box?.[1]).toBeGreaterThan(150);
      expect(box?.[3]).toBeLessThan(400);
      expect(out.notes ?? []).toEqual([]);
    },
    OCR_MS,
  );

  it(
    'a PDF that is only an image: read, boxed in PDF points',
    async () => {
      // The eval's scan of the invoice (below): its first page is this invoice, drawn at 200 dpi.
      const { out } = await scanInProcess();
      expect(out.results).toMatchObject({ invoice_number: 'INV-1234', total: 99.5 });
      const box = out.grounding.invoice_number?.box;
      expect(box?.[0]).toBeGreaterThan(30);
      expect(box?.[2]).toBeLessThan(298);
      expect(box?.[1]).toBeGreaterThan(30);
      expect(box?.[3]).toBeLessThan(120);
    },
    OCR_MS,
  );

  it(
    'a multi-page TIFF: every page read, each value on the page it stands on',
    async () => {
      const out = await read(grayTiff([other, invoice]), 'image/tiff');
      expect(out.pageCount).toBe(2);
      expect(out.results).toMatchObject({ invoice_number: 'INV-1234', total: 99.5 });
      expect(out.grounding.invoice_number?.page).toBe(2);
      expect(out.grounding.total?.page).toBe(2);
    },
    OCR_MS,
  );

  it(
    'a blank scan: every field null, and a note says OCR found no words',
    async () => {
      const out = await read(await grayPng(blank), 'image/png');
      expect(out.results.invoice_number).toBeNull();
      expect(out.results.total).toBeNull();
      expect(out.notes).toEqual([expect.stringMatching(/page 1 has no text layer, and OCR found no words/)]);
    },
    OCR_MS,
  );

  it(
    'an image whose header claims more pixels than OCR reads is not decoded: refused (too_large), saying why',
    async () => {
      const claiming = Buffer.from(png);
      claiming.writeUInt32BE(20_000, 16);
      claiming.writeUInt32BE(20_000, 20);
      const refused = await read(claiming, 'image/png').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(EngineError);
      expect(refused).toMatchObject({ code: 'too_large' });
      expect((refused as Error).message).toMatch(/20000×20000 pixels, more than OCR reads .*scan it at 300 dpi/);
    },
    OCR_MS,
  );

  it(
    'a page over 25 million pixels (a receipt on an A4 scan at 600 dpi) is drawn smaller and read, its boxes in its own pixels',
    async () => {
      // The invoice at 400 dpi in the top left corner of a 28-million-pixel white page.
      const text = await renderGray(await makePdf([['Invoice number INV-1234', '', 'Total 99.50']], 'A6'), 400);
      const width = 5600;
      const big: Gray = { width, height: 5000, pixels: new Uint8Array(width * 5000).fill(255) };
      for (let y = 0; y < text.height; y++)
        big.pixels.set(text.pixels.subarray(y * text.width, (y + 1) * text.width), y * width);
      const out = await read(await grayPng(big), 'image/png');
      expect(out.results).toMatchObject({ invoice_number: 'INV-1234', total: 99.5 });
      // "Total 99.50" is the third line, 50 pt (278 pixels at 400 dpi) from the page's top left.
      expect(out.grounding.total?.box[0]).toBeGreaterThan(200);
      expect(out.grounding.total?.box[0]).toBeLessThan(600);
      expect(out.notes ?? []).toEqual([]);
    },
    OCR_MS,
  );

  it(
    'OCR reads at most OCR_MAX_PAGES pages of a document: the rest are charged, unread, and a note says so',
    async () => {
      const small: Gray = { width: 120, height: 120, pixels: new Uint8Array(120 * 120).fill(255) };
      const out = await read(grayTiff(Array.from({ length: OCR_MAX_PAGES + 1 }, () => small)), 'image/tiff');
      expect(out.pageCount).toBe(OCR_MAX_PAGES + 1);
      expect(out.notes?.at(-1)).toBe(
        `page ${OCR_MAX_PAGES + 1} has no text layer and was not read: OCR reads at most ${OCR_MAX_PAGES} pages of a document`,
      );
    },
    OCR_MS,
  );
});

describe("the eval's scans (fixtures/lib/scans.ts scanOf; its scoring: scan-eval.test.ts)", () => {
  it(
    'a scan keeps every page and its size, has no text layer, and the engine reads its values through OCR',
    async () => {
      const { scan, out } = await scanInProcess();
      const text = await readPdf(scan);
      expect(text.pageCount).toBe(2);
      expect(text.layout.pages.every((p) => p.lines.length === 0)).toBe(true);
      expect(text.scanned).toEqual([1, 2]);
      const { pdf, close } = await openPdf(scan);
      const size = (await pdf.getPage(1)).getViewport({ scale: 1 });
      await close();
      // A6 in points, as pdfkit drew the original.
      expect(Math.round(size.width)).toBe(298);
      expect(Math.round(size.height)).toBe(420);
      expect(out.pageCount).toBe(2);
      expect(out.results).toMatchObject({ invoice_number: 'INV-1234', total: 99.5 });
    },
    OCR_MS,
  );
});

describe('scans in the engine worker threads', () => {
  let engine: Engine;
  beforeAll(() => {
    engine = new EnginePool({ workers: 1 });
  });
  afterAll(() => engine.close());

  it(
    'reads a scanned PNG in a worker exactly as in process',
    async () => {
      const out = await engine.extract({ bytes: png, mimeType: 'image/png', fields: INVOICE_FIELDS });
      expect(out.results).toMatchObject({ invoice_number: 'INV-1234', total: 99.5 });
      expect(out.grounding).toEqual((await pngInProcess()).grounding);
    },
    OCR_MS,
  );
});

describe('doubtful words', () => {
  it('a value whose box holds a word read with low confidence is null, and its grounding dropped', () => {
    const results = { invoice_number: 'INV-1234', total: 99.5, line_items: [{ amount: 5, description: 'Bolts' }] };
    const grounding = {
      invoice_number: { page: 1, box: [100, 10, 300, 30] as [number, number, number, number] },
      total: { page: 1, box: [100, 50, 300, 70] as [number, number, number, number] },
      'line_items[0].amount': { page: 2, box: [400, 10, 450, 30] as [number, number, number, number] },
      'line_items[0].description': { page: 2, box: [100, 10, 300, 30] as [number, number, number, number] },
    };
    dropDoubtful(results, grounding, [
      { page: 1, box: [250, 52, 290, 68] },
      { page: 2, box: [410, 12, 440, 28] },
    ]);
    expect(results).toEqual({
      invoice_number: 'INV-1234',
      total: null,
      line_items: [{ amount: null, description: 'Bolts' }],
    });
    expect(Object.keys(grounding).sort()).toEqual(['invoice_number', 'line_items[0].description']);
  });
});

/**
 * Letters with diacritics on scans (no wrong value from a scan). With English as
 * tesseract's first language, its model, which has no "ü" or "é", read these lines as "Muller",
 * "Bohm", "Jurgen", "fur", "regler", "Helene" with word confidences of 88-96: wrong values that
 * no confidence rule catches. Drawn by the test at 300 dpi.
 */
describe('diacritics on scans', () => {
  it(
    'German and French words keep their letters',
    async () => {
      const pdf = await makePdf(
        [
          [
            'Rechnung an:',
            'Liselotte Müller',
            'Günter Böhm',
            'Jürgen Schüler',
            'Bill to: Müller GmbH',
            '',
            'Lieferung für Müller, Grüße',
            'Facture à régler, Hélène Français',
          ],
        ],
        'A6',
      );
      const scan = await readImage('png', new Uint8Array(await grayPng(await renderGray(pdf, 300))));
      const words = (scan.pages[0]?.lines ?? []).flatMap((l) => l.cells.flatMap((c) => c.text.split(' ')));
      for (const word of ['Müller', 'Böhm', 'Jürgen', 'für', 'régler,', 'Hélène', 'Français'])
        expect(words).toContain(word);
      for (const stripped of ['Muller', 'Bohm', 'Jurgen', 'fur', 'regler,', 'Helene', 'Francais'])
        expect(words).not.toContain(stripped);
    },
    OCR_MS,
  );
});

/**
 * What misleads tesseract's one threshold for the page (ocr-image.ts): a receipt between the black
 * bands of a scanner's open lid, and a faint print beside a small black mark (a number written on
 * it by hand). Before the page was cleaned for OCR, both read as no words at all.
 */
describe('faint receipts on scans', () => {
  const receipt = [
    'TEO HENG STATIONERY & BOOKS',
    'NO.53, JALAN BESAR',
    '45600 BATANG BERJUNTAI',
    '',
    'DATE 23/01/2018',
    'TOTAL 18.00',
  ];
  /** The print faded toward the paper: ink at `strength` of its darkness. */
  const faded = (page: Gray, strength: number): Gray => ({
    ...page,
    pixels: page.pixels.map((v) => Math.round(255 - (255 - v) * strength)),
  });
  const wordsOf = async (page: Gray) => {
    const scan = await readImage('png', new Uint8Array(await grayPng(page)));
    return (scan.pages[0]?.lines ?? []).flatMap((l) => l.cells.flatMap((c) => c.text.split(' ')));
  };

  it(
    "a grey print between the black bands of a scanner's lid, their edges torn, is read",
    async () => {
      const page = faded(await renderGray(await makePdf([receipt], 'A6'), 200), 0.4);
      const band = Math.round(page.height * 0.08);
      for (let y = 0; y < page.height; y++)
        for (let x = 0; x < page.width; x++) {
          const depth = band + Math.round(8 * Math.sin(x / 9));
          if (y < depth || y >= page.height - depth) page.pixels[y * page.width + x] = 10;
        }
      const words = await wordsOf(page);
      for (const word of ['STATIONERY', 'JALAN', 'BATANG', '23/01/2018', '18.00']) expect(words).toContain(word);
    },
    OCR_MS,
  );

  it(
    'a faint print with a small black mark beside it is read',
    async () => {
      const page = faded(await renderGray(await makePdf([receipt], 'A6'), 150), 0.3);
      for (let y = Math.round(page.height * 0.5); y < Math.round(page.height * 0.56); y++)
        for (let x = Math.round(page.width * 0.2); x < Math.round(page.width * 0.6); x++)
          if (x % 30 < 8) page.pixels[y * page.width + x] = 15;
      const words = await wordsOf(page);
      for (const word of ['STATIONERY', 'JALAN', 'BATANG', '23/01/2018', '18.00']) expect(words).toContain(word);
    },
    OCR_MS,
  );
});
