import type * as Canvas from '@napi-rs/canvas';
import { importEngine } from '../engine-package.ts';
import type { Results } from '../contract/index.ts';
import { type ImageKind, imageSizes, tiffPage } from './images.ts';
import { type Page, type TextPiece, layoutPage } from './layout.ts';
import { isPrintedMonth } from './dates.ts';
import { isLegalFormWord } from './letterhead.ts';
import { drawnImage, turnedByExif } from './ocr-image.ts';
import { OCR_LANGUAGE_NAMES, type OcrLayout, type OcrWord, OcrTimeout, recognise } from './ocr.ts';
import { openPdf } from './pdf-text.ts';
import { type ByteSource, type SourceInput, withSource } from './source.ts';
import { EngineError, type Grounding, type Place } from './types.ts';

// A native binding, from the engine package (src/engine-package.ts).
const { createCanvas } = await importEngine<typeof Canvas>('@napi-rs/canvas');

/**
 * Scans: pages with no text layer (an image file, a PDF page that is only a picture) are
 * read by OCR, and their words become positioned text like a PDF's, so that layout and
 * grounding apply unchanged. Bounded per document: a page count, a time budget, and a
 * pixel ceiling checked from the file's header before anything is decoded (OCR's memory
 * is WebAssembly memory, outside the worker's heap limit). Loaded by import() only when a
 * page has no text.
 */

/** Pages read by OCR in one document at most; the rest are left unread, and a note says so. */
export const OCR_MAX_PAGES = 20;
/** OCR time for one document at most (about 5–9 s a page on a 2-core machine). */
const OCR_BUDGET_MS = 120_000;
/** About one page's OCR time: a page read again cleaned only when this much of the budget is left. */
const PAGE_OCR_MS = 10_000;
/** The largest page OCR reads as it is: an A3 page at 400 dpi. */
const OCR_MAX_PIXELS = 25_000_000;
/**
 * The largest image page read at all, not a decompression bomb: an A4 page scanned at 600 dpi
 * (a shop receipt on a flatbed) is 35 million pixels. A page above OCR_MAX_PIXELS is drawn
 * smaller first, to DOWNSCALED_PIXELS, so OCR's memory stays that of a 300 dpi page.
 */
const IMAGE_MAX_PIXELS = 60_000_000;
const DOWNSCALED_PIXELS = OCR_MAX_PIXELS / 2;
/** Words read with less confidence (0..100) make any value they touch null: a doubtful value is no value. */
const MIN_WORD_CONFIDENCE = 75;
/**
 * A value no label vouches for (a letterhead's name and address) is read from the words alone, so
 * each word must be surer: below this, the value is null.
 */
const MIN_UNLABELLED_CONFIDENCE = 90;
/** PDF pages are rendered for OCR at this resolution (capped to OCR_MAX_PIXELS / 2). */
const RENDER_DPI = 300;

/**
 * A word of a closed list spelt exactly, a month's name or a legal form (letterhead.ts): no guess,
 * as a misread of one ("Apt", "3HD") is no word of the list, so OCR's low confidence in it (small
 * print, a bold face) is no doubt about the value it is part of.
 */
export const isClosedListWord = (text: string): boolean => isPrintedMonth(text) || isLegalFormWord(text);

export type Scan = {
  /** The pages read, numbered as in the document. */
  pages: Page[];
  /** Boxes of the words read with low confidence. */
  doubtful: Place[];
  /** Boxes of the words read with less confidence than a value without a label needs (the doubtful among them). */
  unsure: Place[];
  /** Why pages were not read, or read as nothing, in the user's words. */
  notes: string[];
};

/** skipped: pages refused for their size (a note of their own says so). */
type Budget = { deadline: number; pagesLeft: number; stopped: boolean; skipped: Set<number> };
const newBudget = (): Budget => ({
  deadline: Date.now() + OCR_BUDGET_MS,
  pagesLeft: OCR_MAX_PAGES,
  stopped: false,
  skipped: new Set(),
});

/** How OCR reads an image (ocr.ts recognise); tests give one of their own. */
export type Recognise = typeof recognise;
type ReadOptions = { layout: OcrLayout; ocr: Recognise };

/**
 * Every page of an image file. Its boxes are in the image's pixels. `layout`: how OCR finds its
 * lines (ocr.ts).
 */
export async function readImage(
  kind: ImageKind,
  bytes: Uint8Array,
  layout: OcrLayout = 'auto',
  ocr: Recognise = recognise,
): Promise<Scan> {
  const sizes = imageSizes(kind, bytes);
  // Not one page OCR would read: nothing to extract, so the document fails (refunded) and says why,
  // rather than completing with every field null and a page charged.
  if (sizes.length > 0 && sizes.every((size) => size.width * size.height > IMAGE_MAX_PIXELS)) {
    const [first] = sizes;
    throw new EngineError(
      'too_large',
      sizes.length === 1 && first !== undefined
        ? `the image is ${first.width}×${first.height} pixels, more than OCR reads (${IMAGE_MAX_PIXELS / 1e6} million pixels): scan it at 300 dpi and submit it again`
        : `every page of the image is more than OCR reads (${IMAGE_MAX_PIXELS / 1e6} million pixels): scan it at 300 dpi and submit it again`,
    );
  }
  const scan = emptyScan();
  const budget = newBudget();
  for (const [i, size] of sizes.entries()) {
    const n = i + 1;
    const pixels = size.width * size.height;
    if (pixels > IMAGE_MAX_PIXELS) {
      scan.notes.push(tooLarge(n, size.width, size.height));
      budget.skipped.add(n);
      continue;
    }
    const image = kind === 'tiff' && sizes.length > 1 ? tiffPage(bytes, n) : bytes;
    const scale = pixels <= OCR_MAX_PIXELS ? 1 : Math.sqrt(DOWNSCALED_PIXELS / pixels);
    const asItIs = () => (scale === 1 ? Promise.resolve(image) : drawnImage(image, size, scale, 'png'));
    let page = emptyScan();
    await readPage(n, scale, asItIs, budget, page, { layout, ocr });
    // A page read as (almost) nothing is read again cleaned (ocr-image.ts): what misled OCR's
    // threshold, a scanner's black lid or a black mark beside a faint print, is gone. Only then:
    // on a page read as it is, the cleaned image's words were closer to the print, but the values
    // picked from them were wrong more often (a date's "09" read as "03"). Not a JPEG turned by its
    // EXIF (tesseract turns the file it decodes, never the pixels drawn here), nor a TIFF's page
    // (the canvas does not decode TIFF).
    if (linesOf(page) < FEW_LINES && kind !== 'tiff' && !turnedByExif(image) && hasTimeForAPage(budget)) {
      const cleaned = await readAgain(n, scale, () => drawnImage(image, size, scale, 'cleaned'), budget, {
        layout,
        ocr,
      });
      if (cleaned !== null && linesOf(cleaned) > linesOf(page)) page = cleaned;
    }
    scan.pages.push(...page.pages);
    scan.doubtful.push(...page.doubtful);
    scan.unsure.push(...page.unsure);
    scan.notes.push(...page.notes);
  }
  return finishNotes(scan, budget, sizes.length);
}

/** The given pages of a PDF (those without text), rendered and read. Boxes are in PDF points. */
export async function readPdfScans(input: SourceInput, pageNumbers: readonly number[]): Promise<Scan> {
  return withSource(input, (source) => readScans(source, pageNumbers));
}

async function readScans(source: ByteSource, pageNumbers: readonly number[]): Promise<Scan> {
  const scan: Scan = { pages: [], doubtful: [], unsure: [], notes: [] };
  const budget = newBudget();
  const { pdf, close } = await openPdf(source, { render: true });
  try {
    for (const n of pageNumbers) {
      const page = await pdf.getPage(n);
      const base = page.getViewport({ scale: 1 });
      const scale = Math.min(RENDER_DPI / 72, Math.sqrt(OCR_MAX_PIXELS / 2 / (base.width * base.height)));
      const render = async () => {
        const viewport = page.getViewport({ scale });
        const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
        const context = canvas.getContext('2d');
        context.fillStyle = 'white';
        context.fillRect(0, 0, canvas.width, canvas.height);
        await page.render({ canvas: null, canvasContext: context, viewport }).promise;
        return canvas.encode('png');
      };
      await readPage(n, scale, render, budget, scan, { layout: 'auto', ocr: recognise });
      page.cleanup();
      if (budget.stopped) break;
    }
  } finally {
    await close();
  }
  return finishNotes(scan, budget, pageNumbers.length, pageNumbers);
}

async function readPage(
  n: number,
  scale: number,
  image: () => Promise<Uint8Array>,
  budget: Budget,
  scan: Scan,
  { layout, ocr }: ReadOptions,
): Promise<void> {
  if (budget.stopped || budget.pagesLeft <= 0) {
    budget.stopped = true;
    return;
  }
  budget.pagesLeft--;
  let pixels: Uint8Array;
  try {
    pixels = await image();
  } catch (e) {
    scan.notes.push(`page ${n} has no text layer and could not be drawn for OCR (${messageOf(e)})`);
    budget.skipped.add(n);
    return;
  }
  let words: OcrWord[];
  try {
    words = await ocr(pixels, budget.deadline - Date.now(), layout);
  } catch (e) {
    if (!(e instanceof OcrTimeout)) {
      throw new EngineError(
        'corrupt',
        `the image of page ${n} cannot be decoded (${messageOf(e)}); check that the file is complete and not damaged, then submit it again`,
      );
    }
    budget.stopped = true;
    budget.pagesLeft++;
    return;
  }
  const pieces: TextPiece[] = words.map((w) => ({
    text: w.text,
    x: w.x0 / scale,
    y: w.baseline / scale,
    width: (w.x1 - w.x0) / scale,
    height: w.height / scale,
  }));
  const doubtful = words.filter((w) => w.confidence < MIN_WORD_CONFIDENCE);
  const placeOf = (w: OcrWord): Place => ({
    page: n,
    box: [w.x0 / scale, w.top / scale, w.x1 / scale, w.bottom / scale],
  });
  for (const w of doubtful) if (!isClosedListWord(w.text)) scan.doubtful.push(placeOf(w));
  for (const w of words)
    if (w.confidence < MIN_UNLABELLED_CONFIDENCE && !isClosedListWord(w.text)) scan.unsure.push(placeOf(w));
  if (words.length === 0) scan.notes.push(`page ${n} has no text layer, and OCR found no words on it`);
  else if (doubtful.length === words.length) {
    scan.notes.push(
      `page ${n} has no text layer, and OCR read none of its ${words.length} words with confidence: its text may be in a language OCR does not read (it reads ${OCR_LANGUAGE_NAMES}), or blurred, skewed or too small; rescan it at 300 dpi`,
    );
  }
  scan.pages.push(layoutPage(n, pieces));
}

function finishNotes(scan: Scan, budget: Budget, total: number, numbers?: readonly number[]): Scan {
  const all = numbers ?? Array.from({ length: total }, (_, i) => i + 1);
  const read = new Set(scan.pages.map((p) => p.number));
  const unread = all.filter((n) => !read.has(n) && !budget.skipped.has(n));
  if (unread.length > 0) {
    const why =
      budget.pagesLeft <= 0
        ? `OCR reads at most ${OCR_MAX_PAGES} pages of a document`
        : `OCR stopped at its time budget of ${OCR_BUDGET_MS / 1000} s for a document`;
    scan.notes.push(`${pagesWord(unread)} no text layer and ${unread.length === 1 ? 'was' : 'were'} not read: ${why}`);
  }
  return scan;
}

/**
 * A page read again, cleaned: its reading, or null when the retry failed in any way (not drawn, an
 * error or a time-out of OCR). The first reading then stands, and the document reads on: a retry's
 * budget is its own, but for the deadline, so that it neither counts as a page nor stops the rest.
 */
async function readAgain(
  n: number,
  scale: number,
  image: () => Promise<Uint8Array>,
  budget: Budget,
  options: ReadOptions,
): Promise<Scan | null> {
  const cleaned = emptyScan();
  const own: Budget = { deadline: budget.deadline, pagesLeft: 1, stopped: false, skipped: new Set() };
  try {
    await readPage(n, scale, image, own, cleaned, options);
  } catch {
    return null;
  }
  return own.stopped || own.skipped.size > 0 ? null : cleaned;
}

/** Whether the budget has a page's time left: a retry with less would take the next page's. */
const hasTimeForAPage = (budget: Budget): boolean => !budget.stopped && budget.deadline - Date.now() >= PAGE_OCR_MS;

/** Lines OCR found on a page, fewer than which it is read again cleaned: a receipt prints a dozen or more. */
const FEW_LINES = 3;
const linesOf = (scan: Scan): number => scan.pages.reduce((sum, p) => sum + p.lines.length, 0);
const emptyScan = (): Scan => ({ pages: [], doubtful: [], unsure: [], notes: [] });

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

const pagesWord = (pages: readonly number[]): string =>
  pages.length === 1 ? `page ${pages[0]} has` : `pages ${pages.join(', ')} have`;

const tooLarge = (n: number, width: number, height: number): string =>
  `page ${n} is ${width}×${height} pixels, more than OCR reads (${IMAGE_MAX_PIXELS / 1e6} million pixels): scan it at 300 dpi and submit it again`;

/**
 * Precision first: a value whose box holds a word OCR was not sure of is no value. Its
 * leaf becomes null and its grounding is dropped. `paths`: only those (all by default).
 */
export function dropDoubtful(
  results: Results,
  grounding: Grounding,
  doubtful: readonly Place[],
  paths?: readonly string[],
): void {
  if (doubtful.length === 0) return;
  for (const [path, place] of Object.entries(grounding)) {
    if (paths && !paths.includes(path)) continue;
    if (!doubtful.some((d) => touches(place, d))) continue;
    setNull(results, path);
    delete grounding[path];
  }
}

/**
 * A word is a value's when most of its width lies in the value's box: a box drawn by the share
 * of a cell's characters ends a little before or after its words, and a label or a time beside
 * the value is not the value's doubt.
 */
function touches(value: Place, word: Place): boolean {
  if (value.page !== word.page) return false;
  const [x0, top, x1, bottom] = value.box;
  const [wx0, wtop, wx1, wbottom] = word.box;
  const middle = (wtop + wbottom) / 2;
  return Math.min(x1, wx1) - Math.max(x0, wx0) > (wx1 - wx0) / 2 && middle >= top && middle <= bottom;
}

/** Sets the leaf a grounding path names ("total", "vendor.name", "line_items[0].amount") to null. */
function setNull(results: Results, path: string): void {
  const steps = path.split(/\.|\[(\d+)\]\.?/).filter((s) => s !== undefined && s !== '');
  let at: unknown = results;
  for (const [i, step] of steps.entries()) {
    if (at === null || typeof at !== 'object') return;
    const key: string | number = Array.isArray(at) ? Number(step) : step;
    if (i === steps.length - 1) {
      Reflect.set(at, key, null);
      return;
    }
    at = Reflect.get(at, key);
  }
}
