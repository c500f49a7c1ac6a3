import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STANDIN_KEY, startStandIn, type StandIn } from '../../bench/lib/standin.ts';
import { CLI, cleanEnv, tempDir } from '../helpers/cli.ts';
import { makePdf } from '../helpers/pdf.ts';

/**
 * Issue 26 item 1: a first run's memory does not grow with the batch. The real CLI sends a
 * hundred, then two thousand, distinct one-page PDFs inline to a stand-in (a bare node:http
 * server answering at once) at -c 8; its peak resident memory (/usr/bin/time's %M) may grow by
 * a bound far above what the batch itself needs per document. Not a timed test: bench row
 * "10 mem" (group 12) is the measure; this one only catches what grows by tens of KB a document
 * (before the collector was told to favour memory: +104 MB from 300 to 3,000 files).
 *
 * The sizes are the smallest that still catch that: with favourMemory() a no-op (src/cli/heap.ts),
 * measured in one sitting, the peak was 112, 124, 140, 184 and 187 MB over 100, 300, 1,000, 2,000
 * and 3,000 files (V8 grows the old generation in steps: 1,000 files are too few to show it), and
 * 105-112 MB at every size with it. 100 files already hold the run's start-up peak.
 */

const SMALL = 100;
const LARGE = 2000;
/** What the larger batch may add to the smaller's peak (measured after: about +10 MB). */
const GROWTH_BOUND_MB = 45;

let standIn: StandIn;
let dir: string;

beforeAll(async () => {
  standIn = await startStandIn();
  dir = tempDir('extract-first-run-mem-');
  const template = await makePdf([['Invoice Number: INV-000001', 'Total: 101.00']]);
  for (const [name, n] of [
    ['small', SMALL],
    ['large', LARGE],
  ] as const) {
    mkdirSync(join(dir, name));
    // Distinct content (a comment after %%EOF), so no file is a copy of another.
    for (let i = 0; i < n; i++)
      writeFileSync(
        join(dir, name, `doc-${String(i).padStart(5, '0')}.pdf`),
        Buffer.concat([template, Buffer.from(`%${name} ${i}\n`)]),
      );
  }
}, 120_000);

afterAll(async () => {
  await standIn?.close();
});

/** One first run over a folder (a fresh SQLite journal): its peak RSS in MB. */
async function peakOfFirstRun(folder: string, n: number): Promise<number> {
  const timeFile = join(dir, `${folder}.time`);
  standIn.reset();
  const run = await execa(
    '/usr/bin/time',
    [
      '-f',
      '%M',
      '-o',
      timeFile,
      process.execPath,
      CLI,
      join(dir, folder),
      '--base-url',
      standIn.url,
      '--api-key',
      STANDIN_KEY,
      '-c',
      '8',
      '--no-progress',
      '-q',
      '--state',
      join(dir, `${folder}.sqlite`),
      '-o',
      join(dir, `${folder}.jsonl`),
    ],
    { env: cleanEnv(), reject: false, timeout: 240_000 },
  );
  expect(run.exitCode, run.stderr).toBe(0);
  expect(standIn.counts.inline).toBe(n);
  expect(
    readFileSync(join(dir, `${folder}.jsonl`), 'utf8')
      .trim()
      .split('\n'),
  ).toHaveLength(n);
  return Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)) / 1024;
}

describe('first run memory (issue 26 item 1)', () => {
  it(`the peak over ${LARGE} files is within ${GROWTH_BOUND_MB} MB of the peak over ${SMALL}`, async () => {
    const small = await peakOfFirstRun('small', SMALL);
    const large = await peakOfFirstRun('large', LARGE);
    console.log(`first run peak RSS: ${small.toFixed(0)} MB over ${SMALL} files, ${large.toFixed(0)} MB over ${LARGE}`);
    expect(large - small).toBeLessThan(GROWTH_BOUND_MB);
  }, 480_000);
});
