import { open } from 'node:fs/promises';
import { EngineError, type Engine, type EngineSource } from '../engine/types.ts';
import { GatewayError } from './errors.ts';

/**
 * Why a page count cannot be a real document's, or null when it can: at least one page, a
 * whole number, and no more pages than bytes (no page can be written in less than a byte).
 * A PDF's page tree declares its own /Count, so a hostile file can claim -1000000 pages.
 */
function pageCountProblem(pages: number, size: number): string | null {
  if (!Number.isSafeInteger(pages) || pages < 1) {
    return `the document declares ${pages} pages; a document has at least one: its page tree is damaged, so re-save the file (print to PDF) and submit it again`;
  }
  if (pages > size) {
    return `the document declares ${pages} pages in ${size} bytes, more pages than bytes: its page tree is damaged, so re-save the file (print to PDF) and submit it again`;
  }
  return null;
}

/** A PDF's end marker sits in its last 1024 bytes (ISO 32000-1, 7.5.5), after any trailing junk readers allow. */
const EOF_WINDOW = 1024;
const PDF_HEAD = Buffer.from('%PDF-');
const PDF_EOF = Buffer.from('%%EOF');

export const TRUNCATED_PDF =
  'the PDF is truncated (it has no %%EOF end marker): it was cut short, most likely sent while it was still being written or copied; send it again once the file is complete';

/**
 * Whether a PDF that could not be counted was cut short: its head says PDF and its last KB has
 * no %%EOF. A reader looking for the cross-reference table of a partial file fails, or searches
 * until the deadline; "damaged" or "a decompression bomb?" would send its sender hunting the
 * wrong thing, where waiting for the writer to finish is the fix.
 */
async function truncatedPdf(source: EngineSource, size: number, mimeType: string): Promise<boolean> {
  if (mimeType !== 'application/pdf') return false;
  const ends = async (): Promise<{ head: Uint8Array; tail: Uint8Array }> => {
    if (source instanceof Uint8Array)
      return { head: source.subarray(0, PDF_HEAD.length), tail: source.subarray(Math.max(0, size - EOF_WINDOW)) };
    const handle = await open(source.path, 'r');
    try {
      const head = Buffer.alloc(PDF_HEAD.length);
      const tail = Buffer.alloc(Math.min(size, EOF_WINDOW));
      await handle.read(head, 0, head.length, 0);
      const { bytesRead } = await handle.read(tail, 0, tail.length, Math.max(0, size - EOF_WINDOW));
      return { head, tail: tail.subarray(0, bytesRead) };
    } finally {
      await handle.close();
    }
  };
  const { head, tail } = await ends().catch(() => ({ head: new Uint8Array(0), tail: new Uint8Array(0) }));
  return Buffer.from(head).equals(PDF_HEAD) && !Buffer.from(tail).includes(PDF_EOF);
}

/** The longest page counting may take on any route: an honest document is counted in well under a second. */
const PAGE_COUNT_TIMEOUT_MS = 30_000;

export type PageCounter = (
  source: EngineSource,
  size: number,
  mimeType: string,
  signal?: AbortSignal,
) => Promise<number>;

/**
 * Why a document has too many pages for this emulator (`processing.max_pages`), ending with what
 * happened to its credits, or null when it has not.
 */
export function overPageCap(pages: number, maxPages: number, credits: string): string | null {
  if (pages <= maxPages) return null;
  return `the document has ${pages} pages, over the emulator's rehearsal cap of ${maxPages} pages per document (processing.max_pages; the real service states no cap): raise processing.max_pages in serve's configuration (--config) to rehearse it, or split the file; ${credits}`;
}

/**
 * limitMs: PAGE_COUNT_TIMEOUT_MS; a test passes a short one, so the deadline is tested without its
 * 30 s. maxPages: `processing.max_pages`, none by default.
 */
export function createPageCounter(
  engine: Engine,
  {
    limitMs = PAGE_COUNT_TIMEOUT_MS,
    maxPages = Number.POSITIVE_INFINITY,
  }: { limitMs?: number; maxPages?: number } = {},
): PageCounter {
  /**
   * Counts pages before anything is charged; an unreadable document is the client's problem (422),
   * and so is a page count no real document has (a damaged or hostile page tree): it never
   * reaches the ledger, nor does one over `maxPages` (the rehearsal cap). Counting is bounded by
   * PAGE_COUNT_TIMEOUT_MS on every route (a decompression bomb stops there); `signal` is the inline
   * request's own deadline.
   */
  return async (source: EngineSource, size: number, mimeType: string, signal?: AbortSignal) => {
    // Inline, the request's own deadline (inline.timeout_ms) bounds it too.
    const countLimit = AbortSignal.timeout(limitMs);
    let pages: number;
    try {
      pages = await engine.countPages(source, mimeType, {
        signal: signal ? AbortSignal.any([signal, countLimit]) : countLimit,
      });
    } catch (err) {
      // The inline request's own deadline stays its own; any other failure of a cut-short PDF says so.
      if (!signal?.aborted && (await truncatedPdf(source, size, mimeType)))
        throw new GatewayError('unreadable_document', TRUNCATED_PDF);
      if (err instanceof EngineError) throw new GatewayError('unreadable_document', err.message);
      if (countLimit.aborted && !signal?.aborted) {
        throw new GatewayError(
          'unreadable_document',
          `counting the document's pages took longer than ${limitMs} ms, which no honest document needs (a decompression bomb?): check the file, re-save it and submit it again`,
        );
      }
      throw err;
    }
    const refused = pageCountProblem(pages, size) ?? overPageCap(pages, maxPages, 'nothing was charged');
    if (refused !== null) throw new GatewayError('unreadable_document', refused);
    return pages;
  };
}
