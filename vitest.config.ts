import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/sequencer.ts';

/**
 * Files that hold wall-clock bounds or measure the machine (a deadline in seconds, CPU ticks,
 * resident memory, the benchmarks' smoke run): they run last, after the rest is done, so the
 * other files' load does not decide their outcome.
 */
const MEASURED = [
  'test/reliability/hostile-bounds.test.ts',
  'test/reliability/hostile-engine.test.ts',
  'test/reliability/hostile-webhooks.test.ts',
  'test/reliability/load.test.ts',
  'test/e2e/batch-cron.test.ts',
  'test/reliability/big-files.test.ts',
  'test/reliability/hostile-wide.test.ts',
  'test/receiver/bounded-memory.test.ts',
  'test/reliability/first-run-memory.test.ts',
];

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // expect.poll waits for what another process does (a delivery, a restart): its default of 1 s
  // failed on a loaded machine (the SIGKILL-restart webhook test, load 20). It answers as soon
  // as the condition holds, so a generous bound costs a passing test nothing.
  expect: { poll: { timeout: 20_000 } },
  // Files share their worker and its loaded modules, which saves a fresh Node and a reload of
  // pdfjs, fastify and zod per file; the helpers' clean-up is run for every file by
  // test/setup.ts (test/helpers/cleanup.ts says why the helpers never call afterEach).
  isolate: false,
  setupFiles: ['test/setup.ts'],
};

export default defineConfig({
  test: {
    pool: 'forks',
    // Most of the suite waits on child processes, servers and real PDFs, not on the CPU:
    // three files at a time keep both cores busy (vitest's default on 2 cores is one file at
    // a time: 7-8 minutes on an idle machine).
    maxWorkers: 3,
    // The slowest files start first (test/sequencer.ts), so no core idles at the end.
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      { test: { ...shared, name: 'suite', include: ['test/**/*.test.ts'], exclude: MEASURED } },
      { test: { ...shared, name: 'measured', include: MEASURED, sequence: { groupOrder: 1 } } },
    ],
    // The JSON report is what .ci/run counts (both projects); the default reporter is for people,
    // and so is the list of the ten slowest files that follows it (test/slowest-files.ts).
    reporters: ['default', 'json', './test/slowest-files.ts'],
    outputFile: { json: 'test-output/vitest-report.json' },
  },
});
