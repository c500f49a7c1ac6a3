import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, NODE } from '../lib/paths.ts';
import { cleanEnv } from '../lib/cli.ts';
import { writeCopies } from '../lib/pdfs.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { STANDIN_KEY, startStandIn } from '../lib/standin.ts';

/** The growth allowed from the smallest folder to the largest: memory flat, whatever is skipped. */
const GROWTH = 1.25;

/** What the full row measured before skips were counted, for the note. */
const BEFORE =
  ". Before skips were counted (a line and a settle entry per file, a chokidar watch per empty file, the whole listing held): 549 MB peak, the PDF's record after 252 s, 116 s from SIGTERM to exit, on a loaded machine (1,000 files: 90 MB, 2.2 s)";

type WatchRun = {
  /** Peak RSS of the watcher (/usr/bin/time %M), MB. */
  peakMb: number;
  /** From its start to the PDF's record in the output, s. */
  firstSendS: number;
  /** From SIGTERM to its exit, s. */
  stopS: number;
  /** Lines it wrote on stderr in all. */
  lines: number;
  code: number | null;
};

/**
 * Group 13: `extract watch` over a drop folder of N empty files (not documents: skipped,
 * uncharged) and one PDF, against the stand-in. The watcher's peak memory and the time to the
 * PDF's record, at N = 100,000 against N = 1,000: what is skipped should cost the watcher no
 * memory per file, and the one document should not wait behind the skips.
 */
export async function watchSkipRows(ctx: BenchContext): Promise<Row[]> {
  const sizes = ctx.tiny ? [10, 40] : [1_000, 100_000];
  const standIn = await startStandIn();
  const runs: Array<{ n: number; run: WatchRun }> = [];
  try {
    for (const n of sizes) {
      const dir = join(ctx.tmp, `watch-${n}`);
      ctx.log(`row 13 watch: ${n} empty files and one PDF`);
      mkdirSync(dir, { recursive: true });
      for (let i = 0; i < n; i++) writeFileSync(join(dir, `empty-${String(i).padStart(6, '0')}.txt`), '');
      await writeCopies(dir, 1, `doc-${n}-`);
      standIn.reset();
      const run = await _watchOnce(ctx, dir, standIn.url, n);
      if (run.code !== 0) throw new Error(`row 13 watch: the watcher over ${n} files ended with ${run.code}`);
      runs.push({ n, run });
    }
  } finally {
    await standIn.close();
  }
  const base = runs[0]!;
  const note = (r: WatchRun): string =>
    `${r.lines} stderr lines; stopped ${r.stopS.toFixed(2)} s after SIGTERM; peak ${r.peakMb.toFixed(0)} MB, first send after ${r.firstSendS.toFixed(2)} s`;
  const last = runs[runs.length - 1]!;
  const label = last.n.toLocaleString('en-US');
  const baseLabel = base.n.toLocaleString('en-US');
  return [
    row(ctx, {
      id: `13 watch rss ${label}`,
      measurement: `extract watch over ${label} empty files and one PDF: peak memory`,
      figure: last.run.peakMb,
      unit: 'MB',
      peer: `the same over ${baseLabel} empty files`,
      peerFigure: base.run.peakMb,
      goal: `<= ${GROWTH}x (flat)`,
      pass: (x) => x <= GROWTH,
      note: `${note(last.run)}${ctx.tiny ? '' : BEFORE}`,
    }),
    row(ctx, {
      id: `13 watch send ${label}`,
      measurement: `extract watch over ${label} empty files and one PDF: time from start to the PDF's record`,
      figure: last.run.firstSendS,
      unit: 's',
      peer: `the same over ${baseLabel} empty files`,
      peerFigure: base.run.firstSendS,
      goal: 'reported',
      note: note(base.run),
    }),
  ];
}

/** One watcher under /usr/bin/time: started, waited on until the PDF's record is out, then SIGTERM. */
async function _watchOnce(ctx: BenchContext, dir: string, url: string, n: number): Promise<WatchRun> {
  const home = join(ctx.tmp, `watch-home-${n}`);
  const out = join(ctx.tmp, `watch-out-${n}.jsonl`);
  const peakFile = join(ctx.tmp, `watch-peak-${n}`);
  const args = [
    ...['-f', '%M', '-o', peakFile, NODE, CLI, 'watch', dir],
    ...['--base-url', url, '--api-key', STANDIN_KEY, '-o', out, '--settle', '0s'],
    ...['--state', join(ctx.tmp, `watch-state-${n}.sqlite`)],
  ];
  const started = performance.now();
  const child = spawn('/usr/bin/time', args, { env: cleanEnv(home), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const deadline = Date.now() + 1_800_000;
  let firstSendS = Number.NaN;
  while (Date.now() < deadline) {
    if (existsSync(out) && readFileSync(out, 'utf8').includes('"status":"completed"')) {
      firstSendS = (performance.now() - started) / 1000;
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  // /usr/bin/time does not pass SIGTERM on: the watcher is its child.
  const pid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
  const stopAt = performance.now();
  process.kill(pid, 'SIGTERM');
  const code = await ended;
  const stopS = (performance.now() - stopAt) / 1000;
  const lines = stderr.split('\n').length - 1;
  const peakMb = Number(readFileSync(peakFile, 'utf8').trim().split('\n').pop()) / 1024;
  ctx.log(`row 13 watch ${n}: first send ${firstSendS.toFixed(2)} s, peak ${peakMb.toFixed(0)} MB, ${lines} lines`);
  return { peakMb, firstSendS, stopS, lines, code };
}
