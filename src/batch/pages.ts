import { readFile } from 'node:fs/promises';

/**
 * Pages the service would charge, counted on this machine for --dry-run and --max-credits.
 * A PDF's page count comes from pdfjs (the page tree, as the service reads it); if pdfjs
 * cannot open the file, a scan for "/Type /Page" objects is a fair estimate. Any other
 * kind of document (an image) is one page.
 */
export async function countPages(path: string, mimeType: string): Promise<number> {
  if (mimeType !== 'application/pdf') return 1;
  const bytes = new Uint8Array(await readFile(path));
  try {
    // Imported here: pdfjs is large, and only dry runs and --max-credits need it.
    const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
    const task = pdfjs.getDocument({ data: bytes.slice(), useSystemFonts: false, verbosity: 0 });
    try {
      const doc = await task.promise;
      return doc.numPages;
    } finally {
      await task.destroy();
    }
  } catch {
    return Math.max(1, scanPageObjects(bytes));
  }
}

/** Counts "/Type /Page" objects (not "/Pages"): cheap, and right for most unencrypted PDFs. */
export function scanPageObjects(bytes: Uint8Array): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
}
