import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker as Thread } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import type * as Tesseract from 'tesseract.js';
import type { Worker } from 'tesseract.js';
import { importEngine, resolveEngineFile } from '../engine-package.ts';

/**
 * Optical character recognition with tesseract.js, its language data read from the npm
 * packages installed beside it (never downloaded: the engine must read scans offline).
 * Loaded by import() only when a page has no text, so start-up and text-only documents
 * never pay for it. One recogniser per engine thread, kept between documents (loading
 * three languages takes about two seconds) and unreferenced while idle, so that it never
 * keeps a process alive.
 */

/**
 * The languages read, as tesseract names their data (@tesseract.js-data/<code>). English comes
 * last: first, its model (which has no "ü" or "é") read "Hélène Français" as "Helene Francais"
 * and "Jürgen Böhm" as "Jurgen Bohm" with high confidence, wrong values no rule could catch;
 * the German and French models read English words as well.
 */
export const OCR_LANGUAGES = ['deu', 'fra', 'eng'] as const;
export const OCR_LANGUAGE_NAMES = 'English, German and French';

/** One recognised word, in the pixels of the image read. y grows down. */
export type OcrWord = {
  text: string;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  /** The word's line's baseline under it. */
  baseline: number;
  /** The line's text height (ascenders to descenders), what a PDF's font size is to its text. */
  height: number;
  /** tesseract's confidence in the word, 0..100. */
  confidence: number;
};

export class OcrTimeout extends Error {}

let current: Promise<Worker> | null = null;

// tesseract.js and its language data come from the engine package (src/engine-package.ts).
const { OEM, PSM, createWorker } = (await importEngine<{ default: typeof Tesseract }>('tesseract.js')).default;

/** The LSTM models ("best_int"): what tesseract.js itself fetches for its LSTM engine, a quarter of the full data's size. */
const trainedData = async (code: string): Promise<string> =>
  fileURLToPath(await resolveEngineFile(`@tesseract.js-data/${code}/4.0.0_best_int/${code}.traineddata.gz`));

/**
 * tesseract.js takes one folder for all languages, and each data package is a folder of
 * its own: a private temporary folder of links joins them for as long as loading takes.
 */
async function start(): Promise<Worker> {
  const dir = await mkdtemp(join(tmpdir(), 'extract-ocr-'));
  try {
    for (const code of OCR_LANGUAGES) await symlink(await trainedData(code), join(dir, `${code}.traineddata.gz`));
    const worker = await createWorker([...OCR_LANGUAGES], OEM.LSTM_ONLY, {
      langPath: dir,
      gzip: true,
      cacheMethod: 'none',
      // Without a handler tesseract.js throws a failed job from its message listener, which
      // would take the engine's thread down; the job's promise carries the failure instead.
      errorHandler: () => {},
    });
    // An invoice is blocks and columns, not the one block of text tesseract.js assumes by default.
    // tesseract's own messages ("Estimating resolution as ...") would land on the server's terminal.
    await worker.setParameters({ tessedit_pageseg_mode: PSM.AUTO, debug_file: '/dev/null' });
    threadOf(worker)?.unref();
    return worker;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The thread tesseract.js runs in (not in its typings). */
function threadOf(worker: Worker): Thread | undefined {
  const thread: unknown = Reflect.get(worker, 'worker');
  return thread instanceof Thread ? thread : undefined;
}

/**
 * How tesseract finds the text on the page: `auto` looks for blocks and columns (an invoice's);
 * `block` reads the image as one block of lines, so that a column set far to the right of its
 * labels (a receipt's amounts) is read on the labels' lines rather than dropped as noise.
 */
export type OcrLayout = 'auto' | 'block';

/**
 * The words of one image (PNG, JPEG or a one-page TIFF), or OcrTimeout once `ms` have
 * passed: the recogniser is then stopped (its thread terminated) and a new one is started
 * for the next image.
 */
export async function recognise(image: Uint8Array, ms: number, layout: OcrLayout = 'auto'): Promise<OcrWord[]> {
  current ??= start().catch((e: unknown) => {
    current = null;
    throw e;
  });
  const started = current;
  const worker = await started;
  const thread = threadOf(worker);
  thread?.ref();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OcrTimeout(`OCR took longer than ${ms} ms`)), Math.max(1, ms));
  });
  try {
    if (layout === 'block') await worker.setParameters({ tessedit_pageseg_mode: PSM.SINGLE_BLOCK });
    const result = await Promise.race([
      worker.recognize(Buffer.from(image), {}, { blocks: true, text: false }),
      timeout,
    ]);
    if (layout === 'block') await worker.setParameters({ tessedit_pageseg_mode: PSM.AUTO });
    return wordsOf(result.data.blocks ?? []);
  } catch (e) {
    if (current === started) current = null;
    await worker.terminate().catch(() => undefined);
    throw e;
  } finally {
    clearTimeout(timer);
    thread?.unref();
  }
}

/** Stops the recogniser, if one runs (in-process callers that want their process to end at once). */
export async function closeOcr(): Promise<void> {
  const running = current;
  current = null;
  if (running) await (await running.catch(() => null))?.terminate().catch(() => undefined);
}

type Blocks = NonNullable<Awaited<ReturnType<Worker['recognize']>>['data']['blocks']>;

function wordsOf(blocks: Blocks): OcrWord[] {
  const out: OcrWord[] = [];
  for (const block of blocks) {
    for (const paragraph of block.paragraphs) {
      for (const line of paragraph.lines) {
        const { x0, y0, x1, y1 } = line.baseline;
        const slope = x1 === x0 ? 0 : (y1 - y0) / (x1 - x0);
        const height = line.rowAttributes.rowHeight + line.rowAttributes.descenders;
        for (const word of line.words) {
          const text = word.text.trim();
          if (text === '') continue;
          const mid = (word.bbox.x0 + word.bbox.x1) / 2;
          out.push({
            text,
            x0: word.bbox.x0,
            x1: word.bbox.x1,
            top: word.bbox.y0,
            bottom: word.bbox.y1,
            baseline: y0 + slope * (mid - x0),
            height: height > 0 ? height : word.bbox.y1 - word.bbox.y0,
            confidence: word.confidence,
          });
        }
      }
    }
  }
  return out;
}
