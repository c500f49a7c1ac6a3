import { fileURLToPath } from 'node:url';
import { InvalidPDFException, OPS, PasswordException, Util, getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { EngineError } from './types.ts';
import { type Layout, type TextPiece, layoutPage } from './layout.ts';

/**
 * PDFs through pdfjs-dist (legacy build, which runs on Node). pdfjs runs in this thread
 * (its "fake worker": the engine is already off the server's event loop in its own
 * worker), loads no fonts and reports no warnings: only positions and text are needed.
 */

const PDFJS_ROOT = fileURLToPath(new URL('./', import.meta.resolve('pdfjs-dist/package.json')));

const OPTIONS = {
  disableFontFace: true,
  useSystemFonts: false,
  verbosity: 0, // errors only: a damaged font must not spam the server's stderr
  cMapUrl: `${PDFJS_ROOT}cmaps/`,
  cMapPacked: true,
  standardFontDataUrl: `${PDFJS_ROOT}standard_fonts/`,
  enableXfa: false,
} as const;

type Opened = { pdf: PDFDocumentProxy; close: () => Promise<void> };

/** The document opened (scan.ts renders its pages from it); `close` must be called. */
export async function openPdf(bytes: Uint8Array): Promise<Opened> {
  // pdfjs takes ownership of (detaches) the buffer it is given: hand it a copy.
  const task = getDocument({ ...OPTIONS, data: new Uint8Array(bytes) });
  try {
    return { pdf: await task.promise, close: () => task.destroy() };
  } catch (e) {
    await task.destroy().catch(() => undefined);
    throw pdfError(e);
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

export async function countPdfPages(bytes: Uint8Array): Promise<number> {
  const { pdf, close } = await openPdf(bytes);
  try {
    return pdf.numPages;
  } finally {
    await close();
  }
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
export async function readPdf(bytes: Uint8Array): Promise<{ pageCount: number; layout: Layout; scanned: number[] }> {
  const { pdf, close } = await openPdf(bytes);
  try {
    const pages = [];
    const scanned: number[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const viewport = page.getViewport({ scale: 1 });
      const content = await page.getTextContent();
      const pieces: TextPiece[] = [];
      for (const item of content.items) {
        if (!('str' in item) || item.str.trim() === '') continue;
        const m = Util.transform(viewport.transform, item.transform);
        const [a = 0, b = 0, c = 0, d = 0, x = 0, y = 0] = m;
        // Rotated or vertical text does not line up with the page's lines: leave it out.
        if (Math.abs(b) > 0.01 * Math.abs(a) || Math.abs(c) > 0.01 * Math.abs(d) || a <= 0) continue;
        pieces.push({ text: item.str, x, y, width: item.width, height: Math.abs(d) || item.height });
      }
      pages.push(layoutPage(n, pieces));
      if (pieces.length === 0 && (await page.getOperatorList()).fnArray.some((op) => IMAGE_OPS.has(op)))
        scanned.push(n);
      page.cleanup();
    }
    return { pageCount: pdf.numPages, layout: { pages }, scanned };
  } catch (e) {
    throw pdfError(e);
  } finally {
    await close();
  }
}
