/**
 * Where row 7 core's time goes, in thread CPU (not wall: the machine is shared): per rep, bare
 * pdfjs-dist getTextContent over the files, then the engine's reading (readPdf: pdfjs's text and
 * the layout), then its grounding of those layouts (groundLayout: labels, scope index, tables,
 * values, grounding), interleaved. Prints microseconds a page, min and median of the reps, and
 * the ratio the row reports (bare / (read + ground)).
 * usage: node bench/peers/engine-split.ts REPS FILE...
 */
import { readFileSync } from 'node:fs';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { groundLayout } from '../../src/engine/extract.ts';
import type { Layout } from '../../src/engine/layout.ts';
import { readPdf } from '../../src/engine/pdf-text.ts';

const [repsArg = '5', ...files] = process.argv.slice(2);
const docs = files.map((f) => new Uint8Array(readFileSync(f)));

const cpu = (): number => {
  const u = process.threadCpuUsage();
  return u.user + u.system;
};

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

type Sample = { bare: number; read: number; ground: number };
const samples: Sample[] = [];
let pages = 0;
for (let r = -1; r < Number(repsArg); r++) {
  let t = cpu();
  pages = 0;
  for (const d of docs) pages += await bare(d);
  const bareUs = cpu() - t;
  t = cpu();
  const layouts: Layout[] = [];
  for (const d of docs) layouts.push((await readPdf(d)).layout);
  const readUs = cpu() - t;
  t = cpu();
  for (const l of layouts) groundLayout(l, INVOICE_FIELDS);
  const groundUs = cpu() - t;
  if (r >= 0) samples.push({ bare: bareUs / pages, read: readUs / pages, ground: groundUs / pages });
}
const min = (k: keyof Sample) => Math.min(...samples.map((s) => s[k]));
const med = (k: keyof Sample) =>
  [...samples.map((s) => s[k])].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? 0;
const row = (k: keyof Sample) =>
  `${k.padEnd(7)} min ${min(k).toFixed(1).padStart(7)}  median ${med(k).toFixed(1).padStart(7)} us/page`;
process.stdout.write(
  `${pages} pages, ${samples.length} reps\n${row('bare')}\n${row('read')}\n${row('ground')}\nratio (min) ${(min('bare') / (min('read') + min('ground'))).toFixed(3)}  (median) ${(med('bare') / (med('read') + med('ground'))).toFixed(3)}\n`,
);
