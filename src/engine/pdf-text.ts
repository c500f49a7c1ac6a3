import { fileURLToPath } from 'node:url';
import type * as Pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { importEngine, resolveEngineFile } from '../engine-package.ts';
import { type Layout, type TextPiece, layoutPage } from './layout.ts';
import { type ByteSource, type SourceInput, bytesSource, readAll, withSource } from './source.ts';
import { EngineError } from './types.ts';

/**
 * PDFs through pdfjs-dist (legacy build, which runs on Node). pdfjs runs in this thread
 * (its "fake worker": the engine is already off the server's event loop in its own
 * worker), loads no fonts and reports no warnings: only positions and text are needed.
 *
 * A file larger than WHOLE_READ_BYTES is read by ranges (pdfjs's range transport, fed by reads of
 * the file): pdfjs asks for the chunks it needs (the cross-reference table, the page tree, each
 * page's objects and content), never the whole, and fetches nothing on its own (disableAutoFetch).
 * pdfjs keeps what it loaded in one buffer of the file's length, whose untouched pages the OS
 * never backs with memory; readPdf reopens the document whenever what it loaded passes
 * LOADED_BYTES_BUDGET, so a document whose every page is large is still read in bounded memory.
 */

/** Files up to this size are read whole (one read, no range round trips); larger ones by ranges. */
export const WHOLE_READ_BYTES = 16 * 1024 * 1024;
/** What pdfjs may have loaded of a range-read file before readPdf reopens it to let that go. */
export const LOADED_BYTES_BUDGET = 128 * 1024 * 1024;
/** The unit of what pdfjs asks for: small, since a page tree walk loads one unit per page object. */
const RANGE_CHUNK_BYTES = 4 * 1024;

// From the engine package (src/engine-package.ts), where npm installed pdfjs.
const { InvalidPDFException, OPS, PDFDataRangeTransport, PasswordException, getDocument } = await importEngine<
  typeof Pdfjs
>('pdfjs-dist/legacy/build/pdf.mjs');
const PDFJS_ROOT = fileURLToPath(new URL('./', await resolveEngineFile('pdfjs-dist/package.json')));

/**
 * For text: no standard font data. A font the PDF does not embed ("Helvetica") gets its text from
 * its encoding and its widths from the PDF or pdfjs's built-in metrics either way; loading the
 * font program as well only costs (about a tenth of pdfjs's time on the bench's 300-page PDFs),
 * and changes no answer (results and grounding byte-identical on the fixtures and the corpus).
 */
const OPTIONS = {
  disableFontFace: true,
  useSystemFonts: false,
  verbosity: 0, // errors only: a damaged font must not spam the server's stderr
  cMapUrl: `${PDFJS_ROOT}cmaps/`,
  cMapPacked: true,
  enableXfa: false,
} as const;
/** For drawing pages (scan.ts renders a page without text for OCR): the glyphs of fonts not embedded, too. */
const RENDER_OPTIONS = { ...OPTIONS, standardFontDataUrl: `${PDFJS_ROOT}standard_fonts/` } as const;

/**
 * Single chunks (an object each: the cross-reference table, the page tree's nodes and pages) kept
 * across the reopenings of one reading, up to KEPT_CHUNK_BYTES: opening a document walks its
 * page tree again, and those reads would otherwise go to the file once per reopening.
 */
type KeptChunks = { chunks: Map<number, Uint8Array>; bytes: number };
const KEPT_CHUNK_BYTES = 16 * 1024 * 1024;

/** loaded: bytes delivered to pdfjs so far (all of them for a file read whole). */
type Opened = {
  pdf: PDFDocumentProxy;
  close: () => Promise<void>;
  loaded: () => number;
  /** Why a read of the file failed, when one did (pdfjs then only says it was stopped). */
  failure: () => unknown;
};

/** Serves pdfjs's range requests from the source; a failed read stops the loading task with its error. */
class SourceRanges extends PDFDataRangeTransport {
  loaded = 0;
  failure: unknown = undefined;
  onFailure: (() => void) | undefined;
  private readonly source: ByteSource;
  private readonly kept: KeptChunks | undefined;
  constructor(source: ByteSource, kept: KeptChunks | undefined) {
    super(source.size, new Uint8Array(0));
    this.source = source;
    this.kept = kept;
  }
  override requestDataRange(begin: number, end: number): void {
    const kept = this.kept?.chunks.get(begin);
    const read = kept?.length === end - begin ? Promise.resolve(kept) : this.source.read(begin, end - begin);
    read.then(
      (chunk) => {
        this.loaded += chunk.length;
        const keep = this.kept;
        let shared = chunk === kept;
        if (keep && !shared && chunk.length <= RANGE_CHUNK_BYTES && keep.bytes < KEPT_CHUNK_BYTES) {
          keep.chunks.set(begin, chunk);
          keep.bytes += chunk.length;
          shared = true;
        }
        // pdfjs takes ownership of (detaches) what it is given: a kept chunk is handed over as a copy.
        this.onDataRange(begin, shared ? new Uint8Array(chunk) : chunk);
      },
      (error: unknown) => {
        this.failure ??= error;
        this.onFailure?.();
      },
    );
  }
}

/** The document opened, for text or (scan.ts) for drawing its pages; `close` must be called. */
export async function openPdf(
  input: ByteSource | Uint8Array,
  { kept, render = false }: { kept?: KeptChunks; render?: boolean } = {},
): Promise<Opened> {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  const options = render ? RENDER_OPTIONS : OPTIONS;
  if (source.size <= WHOLE_READ_BYTES) {
    // pdfjs takes ownership of (detaches) the buffer it is given: hand it a copy.
    const data = new Uint8Array(await readAll(source));
    const task = getDocument({ ...options, data });
    try {
      return {
        pdf: await task.promise,
        close: () => task.destroy(),
        loaded: () => data.length,
        failure: () => undefined,
      };
    } catch (e) {
      await task.destroy().catch(() => undefined);
      throw pdfError(e);
    }
  }
  const range = new SourceRanges(source, kept);
  const task = getDocument({
    ...options,
    range,
    rangeChunkSize: RANGE_CHUNK_BYTES,
    disableAutoFetch: true,
    disableStream: true,
  });
  range.onFailure = () => void task.destroy().catch(() => undefined);
  try {
    const pdf = await task.promise;
    return { pdf, close: () => task.destroy(), loaded: () => range.loaded, failure: () => range.failure };
  } catch (e) {
    await task.destroy().catch(() => undefined);
    throw range.failure ?? pdfError(e);
  }
}

function pdfError(e: unknown): EngineError {
  if (e instanceof EngineError) return e;
  if (e instanceof PasswordException) {
    return new EngineError(
      'encrypted',
      'the PDF is encrypted with a password; remove the password and submit it again',
    );
  }
  const detail = e instanceof Error ? e.message : String(e);
  if (e instanceof InvalidPDFException) {
    return new EngineError(
      'corrupt',
      `the PDF cannot be read (${detail}); check that the file is complete and not damaged, then submit it again`,
    );
  }
  return new EngineError(
    'corrupt',
    `the PDF cannot be read (${detail}); open it in a PDF viewer to check it, re-save it and submit it again`,
  );
}

export async function countPdfPages(input: SourceInput): Promise<number> {
  return withSource(input, async (source) => {
    const { pdf, close } = await openPdf(source);
    try {
      return pdf.numPages;
    } finally {
      await close();
    }
  });
}

/** What draws a picture on a page: a page without text that draws one is a scan, for OCR. */
const IMAGE_OPS: ReadonlySet<number> = new Set([
  OPS.paintImageXObject,
  OPS.paintInlineImageXObject,
  OPS.paintImageMaskXObject,
  OPS.paintImageXObjectRepeat,
  OPS.paintInlineImageXObjectGroup,
]);

/**
 * Page count and the positioned text of every page. A page without a text layer has no
 * lines; `scanned` lists those of them that draw an image (a blank page is not OCR'd).
 */
export async function readPdf(input: SourceInput): Promise<{ pageCount: number; layout: Layout; scanned: number[] }> {
  return withSource(input, async (source) => {
    const kept: KeptChunks = { chunks: new Map(), bytes: 0 };
    let opened = await openPdf(source, { kept });
    try {
      const pageCount = opened.pdf.numPages;
      const pages = [];
      const scanned: number[] = [];
      for (let n = 1; n <= pageCount; n++) {
        if (opened.loaded() > LOADED_BYTES_BUDGET) {
          // What pdfjs loaded so far is let go with the document; the next pages load afresh.
          await opened.close();
          opened = await openPdf(source, { kept });
        }
        const page = await opened.pdf.getPage(n);
        // Read by index, not destructured: destructuring walks an iterator, for every piece of text too.
        const vt = page.getViewport({ scale: 1 }).transform;
        const va = vt[0] ?? 0;
        const vb = vt[1] ?? 0;
        const vc = vt[2] ?? 0;
        const vd = vt[3] ?? 0;
        const ve = vt[4] ?? 0;
        const vf = vt[5] ?? 0;
        const content = await page.getTextContent();
        const pieces: TextPiece[] = [];
        const items = content.items;
        for (let k = 0; k < items.length; k++) {
          const item = items[k];
          if (item === undefined || !('str' in item) || item.str.trim() === '') continue;
          // pdfjs's Util.transform(viewport, item), written out: one array less for every piece of text.
          const it = item.transform as number[];
          const ia = it[0] ?? 0;
          const ib = it[1] ?? 0;
          const ic = it[2] ?? 0;
          const id = it[3] ?? 0;
          const ie = it[4] ?? 0;
          const iF = it[5] ?? 0;
          const a = va * ia + vc * ib;
          const b = vb * ia + vd * ib;
          const c = va * ic + vc * id;
          const d = vb * ic + vd * id;
          const x = va * ie + vc * iF + ve;
          const y = vb * ie + vd * iF + vf;
          // Rotated or vertical text does not line up with the page's lines: leave it out.
          if (Math.abs(b) > 0.01 * Math.abs(a) || Math.abs(c) > 0.01 * Math.abs(d) || a <= 0) continue;
          pieces.push({ text: item.str, x, y, width: item.width, height: Math.abs(d) || item.height });
        }
        pages.push(layoutPage(n, pieces));
        if (pieces.length === 0 && (await page.getOperatorList()).fnArray.some((op) => IMAGE_OPS.has(op)))
          scanned.push(n);
        page.cleanup();
      }
      return { pageCount, layout: { pages }, scanned };
    } catch (e) {
      throw opened.failure() ?? pdfError(e);
    } finally {
      await opened.close();
    }
  });
}
