import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that take a long time for their size (a browser, a PostgreSQL server, the benchmarks'
 * smoke run, many child processes), measured on the 2-core CI machine. Vitest orders a fresh
 * clone's files by size (it has no durations cached yet), which started these last and left one
 * core idle while the last of them ran; they start first instead, each in its own project's turn
 * (test/layers.ts). A file missing from the list still runs, just in vitest's own order.
 */
const SLOW_FIRST = [
  // processes (a fresh-clone CI run on 2026-11-27, one pool: seconds of file time)
  // big-files waits on its 1 GB document more than it computes (~16 CPU-s, 25 s alone): started
  // first, beside the rest, it no longer ends the suite alone among the measured files.
  'test/reliability/big-files.test.ts', // 56
  'test/reliability/shared-batch.test.ts', // 38
  'test/bench/smoke.test.ts', // 26
  'test/app/app.test.ts', // 25
  'test/e2e/watch.test.ts', // 23
  'test/e2e/watch-restart.test.ts', // 22
  'test/e2e/batch-resume.test.ts', // 19
  // measured
  'test/receiver/bounded-memory.test.ts', // 28
  'test/reliability/hostile-engine.test.ts', // 25
  // in-process
  'test/engine/pool.test.ts', // 9
  'test/engine/scans.test.ts', // 8
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const at = SLOW_FIRST.findIndex((path) => spec.moduleId.endsWith(path));
      return at === -1 ? SLOW_FIRST.length : at;
    };
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
