import { defineConfig } from 'vitest/config';
import { IN_PROCESS_WORKERS, MEASURED, PROCESSES, processWorkersNow } from './test/layers.ts';
import SlowFirstSequencer from './test/sequencer.ts';

// How busy the machine is now decides the layout (half a second's sample: test/layers.ts).
const processWorkers = await processWorkersNow();
const processTurn = processWorkers === IN_PROCESS_WORKERS ? 0 : 1;

const shared = {
  // Files share their worker and its loaded modules, which saves a fresh Node and a reload of
  // pdfjs, fastify and zod per file; the helpers' clean-up is run for every file by
  // test/setup.ts (test/helpers/cleanup.ts says why the helpers never call afterEach).
  isolate: false,
  setupFiles: ['test/setup.ts'],
};

/**
 * A time-out is not an assertion: it only says when a test that waits is taken for hung. The
 * bounds are what a loaded 2-core machine needs (a second copy of the suite beside this one:
 * `Test timed out in 30000ms` on 15 tests at load 12-17), and short enough that a hang still
 * fails within two minutes. expect.poll answers as soon as its condition holds, so a long
 * bound costs a passing test nothing (its 1 s default failed the SIGKILL-restart webhook test).
 */
const patient = (ms: number) => ({ testTimeout: ms, hookTimeout: ms, expect: { poll: { timeout: ms / 2 } } });

export default defineConfig({
  test: {
    pool: 'forks',
    // The slowest files of each project start first (test/sequencer.ts), so no core idles at the end.
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      // (vitest's default on 2 cores is one file at a time: 7-8 minutes on an idle machine)
      {
        test: {
          ...shared,
          ...patient(60_000),
          name: 'in-process',
          include: ['test/**/*.test.ts'],
          exclude: [...PROCESSES, ...MEASURED],
          maxWorkers: IN_PROCESS_WORKERS,
        },
      },
      // After them, fewer at a time: each file starts its own processes.
      {
        test: {
          ...shared,
          ...patient(120_000),
          name: 'processes',
          include: PROCESSES,
          exclude: MEASURED,
          maxWorkers: processWorkers,
          sequence: { groupOrder: processTurn },
        },
      },
      // Last, once the rest of the suite is done: the files that read the machine. Three at a
      // time, as before this split (one at a time would add minutes: they are the longest files).
      {
        test: {
          ...shared,
          ...patient(120_000),
          name: 'measured',
          include: MEASURED,
          maxWorkers: 3,
          sequence: { groupOrder: processTurn + 1 },
        },
      },
    ],
    // The JSON report is what .ci/run counts (all projects); the default reporter is for people,
    // and so is the list of the ten slowest files that follows it (test/slowest-files.ts).
    reporters: ['default', 'json', ['./test/slowest-files.ts', { processWorkers }]],
    outputFile: { json: 'test-output/vitest-report.json' },
  },
});
