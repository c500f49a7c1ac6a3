import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that take a long time for their size (a browser, a PostgreSQL server, the benchmarks'
 * smoke run, many child processes), measured on the 2-core CI machine. Vitest orders a fresh
 * clone's files by size (it has no durations cached yet), which started these last and left one
 * core idle while the last of them ran; they start first instead, each in its own project's turn
 * (test/layers.ts). A file missing from the list still runs, just in vitest's own order.
 */
const SLOW_FIRST = [
  'test/reliability/shared-batch.test.ts',
  'test/app/app.test.ts',
  'test/batch/unattended.test.ts',
  'test/bench/smoke.test.ts',
  'test/reliability/security.test.ts',
  'test/app/paging.test.ts',
  'test/reliability/receiver-bad-input.test.ts',
  'test/emulator/webhooks.test.ts',
  'test/emulator/api.test.ts',
  'test/engine/worker.test.ts',
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
