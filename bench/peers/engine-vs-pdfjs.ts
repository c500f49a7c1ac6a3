/**
 * Row 7 per core: the engine's whole work on a text PDF (extractInProcess: pdfjs-dist's text,
 * layout, labels and grounding with the built-in Invoices parser) against pdfjs-dist's bare
 * text extraction (getTextContent on every page), in this one thread, warm, each rep running
 * both one after the other so that a busy moment of the machine hits both alike. Prints
 * `{"engine": pages/s, "bare": pages/s}` (medians), one line for each set of files.
 * usage: node engine-vs-pdfjs.ts REPS [--cold] FILE... [-- FILE...]...
 * --cold: no warm-up pass (bench --tiny, which measures nothing and wants each path run once)
 * --: a further set, measured on its own after the one before (bench --tiny: one start of Node,
 *     pdfjs-dist and the engine for both of row 7's sets; a full run gives each its own process)
 */
import { readFileSync } from 'node:fs';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { extractInProcess } from '../../src/engine/extract.ts';

const [repsArg = '3', ...rest] = process.argv.slice(2);
const cold = rest[0] === '--cold';
const sets: string[][] = [[]];
for (const arg of cold ? rest.slice(1) : rest) {
  if (arg === '--') sets.push([]);
  else sets.at(-1)?.push(arg);
}

async function bare(bytes: Uint8Array): Promise<number> {
  const task = getDocument({ data: new Uint8Array(bytes), disableFontFace: true, useSystemFonts: false, verbosity: 0 });
  const pdf = await task.promise;
  for (let p = 1; p <= pdf.numPages; p++) {
    const page = await pdf.getPage(p);
    await page.getTextContent();
    page.cleanup();
  }
  await task.destroy();
  return pdf.numPages;
}

async function engine(bytes: Uint8Array): Promise<number> {
  return (await extractInProcess({ bytes, mimeType: 'application/pdf', fields: INVOICE_FIELDS })).pageCount;
}

async function rate(docs: Uint8Array[], read: (bytes: Uint8Array) => Promise<number>): Promise<number> {
  const started = performance.now();
  let pages = 0;
  for (const bytes of docs) pages += await read(bytes);
  return pages / ((performance.now() - started) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
for (const files of sets) {
  const docs = files.map((f) => new Uint8Array(readFileSync(f)));
  if (!cold) {
    await rate(docs, engine);
    await rate(docs, bare);
  }
  const out: Record<'engine' | 'bare', number[]> = { engine: [], bare: [] };
  for (let r = 0; r < Number(repsArg); r++) {
    out.engine.push(await rate(docs, engine));
    out.bare.push(await rate(docs, bare));
  }
  process.stdout.write(`${JSON.stringify({ engine: median(out.engine), bare: median(out.bare) })}\n`);
}
