/**
 * The limit for row 7: pdfjs-dist's own text extraction (getTextContent on every page) of
 * the same files, one after the other in one thread, with nothing else. Prints pages/s.
 * usage: node pdfjs-text.ts FILE...
 */
import { readFileSync } from 'node:fs';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

const files = process.argv.slice(2);
const started = performance.now();
let pages = 0;
for (const file of files) {
  const task = getDocument({
    data: new Uint8Array(readFileSync(file)),
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  });
  const pdf = await task.promise;
  for (let p = 1; p <= pdf.numPages; p++) {
    const page = await pdf.getPage(p);
    await page.getTextContent();
    page.cleanup();
    pages++;
  }
  await task.destroy();
}
process.stdout.write(`${pages / ((performance.now() - started) / 1000)}\n`);
