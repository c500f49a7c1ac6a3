import { defineConfig } from 'vitest/config';
import { IN_PROCESS_WORKERS, PROC_SUFFIX, processWorkersFor } from './test/layers.ts';

// The layer is in the file's name (test/layers.ts): `*.proc.test.ts` start processes.
const PROC = `test/**/*${PROC_SUFFIX}`;
const processWorkers = processWorkersFor(process.env);

const shared = {
  // Files share their worker and its loaded modules, which saves a fresh Node and a reload of
  // pdfjs, fastify and zod per file; what a test starts is stopped by its fixtures
  // (test/helpers/fixtures.ts), which belong to the test or file that asks, not to a module.
  isolate: false,
  setupFiles: ['test/setup.ts'],
};

/**
 * A time-out is not an assertion: it only says when a test that waits is taken for hung. The
 * bounds are what a loaded 2-core machine needs (a second copy of the suite beside this one),
 * and short enough that a hang still fails within two minutes. expect.poll answers as soon as its
 * condition holds, so a long bound costs a passing test nothing.
 */
const patient = (ms: number) => ({ testTimeout: ms, hookTimeout: ms, expect: { poll: { timeout: ms / 2 } } });

export default defineConfig({
  test: {
    pool: 'forks',
    projects: [
      // (vitest's default on 2 cores is one file at a time)
      {
        test: {
          ...shared,
          ...patient(60_000),
          name: 'in-process',
          include: ['test/**/*.test.ts'],
          exclude: [PROC],
          maxWorkers: IN_PROCESS_WORKERS,
        },
      },
      // After them unless as many at a time (processWorkersFor): each file starts its own processes.
      {
        test: {
          ...shared,
          ...patient(120_000),
          name: 'processes',
          include: [PROC],
          maxWorkers: processWorkers,
          sequence: { groupOrder: processWorkers === IN_PROCESS_WORKERS ? 0 : 1 },
        },
      },
    ],
    // The JSON report is what .ci/run counts (all projects); the default reporter is for people,
    // and so is the list of the ten costliest files that follows it (test/slowest-files.ts).
    reporters: ['default', 'json', ['./test/slowest-files.ts', { processWorkers }]],
    outputFile: { json: 'test-output/vitest-report.json' },
  },
});
