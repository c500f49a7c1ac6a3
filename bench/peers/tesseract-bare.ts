/**
 * The peer for row 10: tesseract.js alone on one page image, as its README shows it
 * (createWorker, recognize), with the same languages and LSTM models the engine loads, the
 * recogniser started once and warmed on the page first. Prints seconds a page (median).
 * usage: node tesseract-bare.ts IMAGE REPS [cold]
 * cold: no warm-up read (bench --tiny, whose engine side is not warmed either)
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OEM, createWorker } from 'tesseract.js';
import { OCR_LANGUAGES } from '../../src/engine/ocr.ts';

const [image = '', repsArg = '1', warmth = 'warm'] = process.argv.slice(2);
const LANGS = [...OCR_LANGUAGES];
const require = createRequire(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'bench-tess-'));
for (const code of LANGS)
  symlinkSync(
    require.resolve(`@tesseract.js-data/${code}/4.0.0_best_int/${code}.traineddata.gz`),
    join(dir, `${code}.traineddata.gz`),
  );
const worker = await createWorker(LANGS, OEM.LSTM_ONLY, { langPath: dir, gzip: true, cacheMethod: 'none' });
const bytes = readFileSync(image);
if (warmth !== 'cold') await worker.recognize(bytes);
const times: number[] = [];
for (let r = 0; r < Number(repsArg); r++) {
  const t = performance.now();
  await worker.recognize(bytes);
  times.push((performance.now() - t) / 1000);
}
await worker.terminate();
rmSync(dir, { recursive: true, force: true });
times.sort((a, b) => a - b);
process.stdout.write(`${times[Math.floor(times.length / 2)]}\n`);
