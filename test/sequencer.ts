import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that take a long time for their size (a browser, a PostgreSQL server, the benchmarks'
 * smoke run, many child processes), measured on the 2-core CI machine. Vitest orders a fresh
 * clone's files by size (it has no durations cached yet), which started these last and left one
 * core idle while the last of them ran; they start first instead, each in its own project's turn
 * (test/layers.ts). A file missing from the list still runs, just in vitest's own order.
 */
const SLOW_FIRST = [
  // processes (a fresh-clone CI run on 2026-11-28, one pool: seconds of file time)
  // big-files waits on its 1 GB document more than it computes (~16 CPU-s, 25 s alone): started
  // first, beside the rest, it no longer ends the suite alone among the measured files.
  'test/reliability/big-files.test.ts', // 53
  'test/reliability/shared-batch.test.ts', // 33
  'test/bench/smoke.test.ts', // 29
  'test/e2e/watch.test.ts', // 21
  'test/e2e/batch-resume.test.ts', // 19
  'test/e2e/journal-identity.test.ts', // 18
  'test/e2e/watch-restart.test.ts', // 17
  'test/app/app.test.ts', // 17
  // measured: three at a time, the longest first. batch-cron (mostly waiting on its circuit) ran
  // last, alone for its last 10 s, when vitest's own order left it out.
  'test/reliability/hostile-engine.test.ts', // 26
  'test/receiver/bounded-memory.test.ts', // 24
  'test/reliability/hostile-bounds.test.ts', // 15
  'test/e2e/batch-cron.test.ts', // 13
  'test/reliability/load.test.ts', // 10
  // in-process
  'test/engine/pool.test.ts', // 11
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
