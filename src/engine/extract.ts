import type { FieldDefinition, Results } from '../contract/index.ts';
import { emptyResults } from '../contract/index.ts';
import { groundDefinition } from './grounding.ts';
import { formatHints } from './hints.ts';
import { type ImageKind, countImagePages, countImagePagesFrom, imageKindOf } from './images.ts';
import { LabelIndex } from './labels.ts';
import { type Layout, layoutText } from './layout.ts';
import type { OcrLayout } from './ocr.ts';
import { countPdfPages, readPdf } from './pdf-text.ts';
import { readReceipt } from './receipts.ts';
import { fillFromSecondReading, lacksReceiptValues } from './rereading.ts';
import type { Scan } from './scan.ts';
import { wholeDocument } from './scope.ts';
import { type ByteSource, type SourceInput, readAll, withSource } from './source.ts';
import { EngineError, type EngineInput, type EngineOutput, type Grounding, type Place } from './types.ts';

/**
 * The engine's whole job in the calling thread: what kind of document the bytes are,
 * its real page count, and results grounded in its text. The worker runs exactly this.
 * A stored file is read by ranges (source.ts): its kind from its head, a PDF's pages and
 * text by the ranges pdfjs asks for, an image's pages from its headers. Only what is read
 * whole has a byte budget of its own: an image for OCR, a text file.
 */

/** The largest image file read whole for OCR (its pixels have their own budget, scan.ts); counted at any size. */
export const IMAGE_MAX_BYTES = 256 * 1024 * 1024;
/** The largest text file read (it is laid out as one page, held whole); counted at any size (one page). */
export const TEXT_MAX_BYTES = 16 * 1024 * 1024;
/** The head the kind of a document is told from. */
const HEAD_BYTES = 8192;

type DocumentKind = { kind: 'pdf' } | { kind: 'image'; image: ImageKind } | { kind: 'text' };

const TEXT_TYPES = new Set(['application/json', 'application/xml', 'application/csv', 'application/x-ndjson']);
const UNDECLARED = new Set(['', 'application/octet-stream', 'binary/octet-stream']);
const DECLARED: Record<string, DocumentKind['kind'] | ImageKind> = {
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/tiff': 'tiff',
  'image/tif': 'tiff',
};
const READS = 'PDF, PNG, JPEG, TIFF and plain text (text/*)';

function isPdf(bytes: Uint8Array): boolean {
  // A PDF may carry a little junk before its header; readers look within the first 1 KiB.
  return Buffer.from(bytes.subarray(0, 1024)).includes('%PDF-');
}

/** `head`: the first HEAD_BYTES of the document (all of it when shorter); `size`: its whole length. */
function kindOf(head: Uint8Array, size: number, mimeType: string): DocumentKind {
  if (size === 0) {
    throw new EngineError(
      'empty',
      'the document is empty (0 bytes); check that the upload sent the file and submit it again',
    );
  }
  const mime = mimeType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (isPdf(head)) return { kind: 'pdf' };
  const image = imageKindOf(head);
  if (image) return { kind: 'image', image };
  const declared = DECLARED[mime];
  if (declared !== undefined) {
    throw new EngineError(
      'corrupt',
      `the file is declared ${mime} but its bytes are not one; check the file and its declared type, then submit it again`,
    );
  }
  if (mime.startsWith('text/') || TEXT_TYPES.has(mime)) return { kind: 'text' };
  if (UNDECLARED.has(mime) && looksLikeText(head)) return { kind: 'text' };
  throw new EngineError(
    'unsupported_type',
    `documents of type ${mime || 'unknown'} cannot be read; the engine reads ${READS}`,
  );
}

function looksLikeText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, lastCompleteChar(head)));
    return true;
  } catch {
    return false;
  }
}

/** Where a UTF-8 sequence cut by a fixed-size slice begins, so that the cut is not an error. */
function lastCompleteChar(head: Uint8Array): number {
  let end = head.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = head[end - i];
    if (b === undefined) break;
    if ((b & 0xc0) === 0x80) continue;
    if (b >= 0xc0) end -= i;
    break;
  }
  return end;
}

function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

/** The source's kind, from its head. */
async function kindOfSource(source: ByteSource, mimeType: string): Promise<DocumentKind> {
  return kindOf(await source.read(0, HEAD_BYTES), source.size, mimeType);
}

function tooLargeToRead(what: string, size: number, budget: number): EngineError {
  return new EngineError(
    'too_large',
    `the ${what} is ${size} bytes; the engine reads ${what}s up to ${budget} bytes whole: split it into smaller files and submit them again`,
  );
}

/** The whole of a source read for extraction, within its kind's byte budget. */
async function readWhole(source: ByteSource, what: string, budget: number): Promise<Uint8Array> {
  if (source.size > budget) throw tooLargeToRead(what, source.size, budget);
  return readAll(source);
}

/** Pages of bytes, a stored file (read by ranges, never whole) or an open source. */
export async function countPagesInProcess(input: SourceInput, mimeType: string): Promise<number> {
  return withSource(input, async (source) => {
    const kind = await kindOfSource(source, mimeType);
    if (kind.kind === 'pdf') return countPdfPages(source);
    if (kind.kind === 'image') return countImagePagesFrom(kind.image, source);
    return 1;
  });
}

/** `input.bytes`: bytes, a stored file (read by ranges) or an open source. */
export async function extractInProcess(
  input: Omit<EngineInput, 'bytes'> & { bytes: SourceInput },
): Promise<EngineOutput> {
  return withSource(input.bytes, (source) => extractFrom(source, input.mimeType, input.fields));
}

async function extractFrom(source: ByteSource, mimeType: string, fields: FieldDefinition): Promise<EngineOutput> {
  const kind = await kindOfSource(source, mimeType);
  if (kind.kind === 'image') {
    const bytes = await readWhole(source, 'image', IMAGE_MAX_BYTES);
    const pageCount = countImagePages(kind.image, bytes);
    return { pageCount, ...(await groundImage(kind.image, bytes, fields)) };
  }
  if (kind.kind === 'text') {
    const bytes = await readWhole(source, 'text file', TEXT_MAX_BYTES);
    const { unlabelled: _, vouched: __, ...grounded } = groundLayout(layoutText(decodeText(bytes)), fields);
    return { pageCount: 1, ...grounded };
  }
  const { pageCount, layout, scanned } = await readPdf(source);
  if (scanned.length === 0) {
    const { unlabelled: _, vouched: __, ...grounded } = groundLayout(layout, fields);
    return { pageCount, ...grounded };
  }
  const { readPdfScans } = await import('./scan.ts');
  const scan = await readPdfScans(source, scanned);
  const pages = layout.pages.map((p) => scan.pages.find((s) => s.number === p.number) ?? p);
  return { pageCount, ...(await groundScanned({ pages }, scan, fields)) };
}

/** How an image is read by OCR (scan.ts readImage); tests give readings of their own. */
type ReadImage = (kind: ImageKind, bytes: Uint8Array, layout: OcrLayout) => Promise<Scan>;

// OCR is imported only for images and PDF pages without text: text documents never load it.
const readByOcr: ReadImage = async (kind, bytes, layout) => (await import('./scan.ts')).readImage(kind, bytes, layout);

/**
 * An image's results: read by OCR, and read a second time as one block of lines when the first
 * reading lacks a value a receipt's rules look for (rereading.ts).
 */
export async function groundImage(
  kind: ImageKind,
  bytes: Uint8Array,
  fields: FieldDefinition,
  readImage: ReadImage = readByOcr,
): Promise<{ results: Results; grounding: Grounding; notes: string[] }> {
  const scan = await readImage(kind, bytes, 'auto');
  const first = await groundScanned({ pages: scan.pages }, scan, fields);
  if (!lacksReceiptValues(fields, first.results)) return first;
  const again = await readImage(kind, bytes, 'block');
  const second = await groundScanned({ pages: again.pages }, again, fields);
  fillFromSecondReading(fields, first, second, groundLayout({ pages: scan.pages }, fields, true).results);
  return first;
}

/** Grounding over pages of which some were read by OCR: its doubtful words null what they touch, and its notes are kept. */
export async function groundScanned(
  layout: Layout,
  scan: { doubtful: Place[]; unsure: Place[]; notes: string[] },
  fields: FieldDefinition,
): Promise<{ results: Results; grounding: Grounding; notes: string[] }> {
  const { dropDoubtful } = await import('./scan.ts');
  const { unlabelled, vouched, ...grounded } = groundLayout(layout, fields, true);
  const doubted = Object.keys(grounded.grounding).filter((path) => !vouched.includes(path));
  dropDoubtful(grounded.results, grounded.grounding, scan.doubtful, doubted);
  dropDoubtful(grounded.results, grounded.grounding, scan.unsure, unlabelled);
  const notes = [...scan.notes];
  if (layout.pages.every((p) => p.lines.length === 0) && notes.length === 0) {
    notes.push('no page has a text layer, and OCR found no words');
  }
  return { ...grounded, notes };
}

/**
 * Results of a definition over a laid-out document, and where each value was found; a document
 * without text grounds nothing. `unlabelled`: the paths read with no label (receipts.ts);
 * `vouched`: those the page's own arithmetic confirms, whose digits a scan's doubt does not null.
 * `scanned`: some page was read by OCR, whose digits can be misread (receipts.ts dates).
 */
export function groundLayout(
  layout: Layout,
  fields: FieldDefinition,
  scanned = false,
): { results: Results; grounding: Grounding; unlabelled: string[]; vouched: string[] } {
  if (layout.pages.every((p) => p.lines.length === 0))
    return { results: emptyResults(fields), grounding: {}, unlabelled: [], vouched: [] };
  const hints = formatHints(layout);
  const grounded = groundDefinition(fields, {
    scope: wholeDocument(layout),
    labels: new LabelIndex(fields),
    hints,
    objectPaths: objectPaths(fields, ''),
  });
  const { unlabelled, vouched } = readReceipt(fields, layout, hints, grounded.results, grounded.grounding, scanned);
  return { ...grounded, unlabelled, vouched };
}

function objectPaths(fields: FieldDefinition, prefix: string): Set<string> {
  const out = new Set<string>();
  for (const f of fields) {
    if (f.type !== 'object') continue;
    out.add(prefix + f.name);
    for (const p of objectPaths(f.fields, `${prefix}${f.name}.`)) out.add(p);
  }
  return out;
}
