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

/** The longest page counting may take on any route: an honest document is counted in well under a second. */
const PAGE_COUNT_TIMEOUT_MS = 30_000;

export type PageCounter = (
  source: EngineSource,
  size: number,
  mimeType: string,
  signal?: AbortSignal,
) => Promise<number>;

/** limitMs: PAGE_COUNT_TIMEOUT_MS; a test passes a short one, so the deadline is tested without its 30 s. */
export function createPageCounter(engine: Engine, limitMs = PAGE_COUNT_TIMEOUT_MS): PageCounter {
  /**
   * Counts pages before anything is charged; an unreadable document is the client's problem (422),
   * and so is a page count no real document has (a damaged or hostile page tree): it never
   * reaches the ledger. Counting is bounded by PAGE_COUNT_TIMEOUT_MS on every route (a decompression
   * bomb stops there); `signal` is the inline request's own deadline.
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
      if (err instanceof EngineError) throw new GatewayError('unreadable_document', err.message);
      if (countLimit.aborted && !signal?.aborted) {
        throw new GatewayError(
          'unreadable_document',
          `counting the document's pages took longer than ${limitMs} ms, which no honest document needs (a decompression bomb?): check the file, re-save it and submit it again`,
        );
      }
      throw err;
    }
    const insane = pageCountProblem(pages, size);
    if (insane !== null) throw new GatewayError('unreadable_document', insane);
    return pages;
  };
}
