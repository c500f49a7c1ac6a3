import { afterAll, afterEach, beforeAll } from 'vitest';
import { runFileCleanups, runTestCleanups } from './helpers/cleanup.ts';
import { type CpuTicks, cpuTicksOf } from './helpers/proc.ts';
import { cpuTicksKey } from './slowest-files.ts';

/**
 * The CPU a file spent, its worker's own and that of the processes it started and waited for,
 * shown by test/slowest-files.ts (null where /proc is not there).
 */
const cpuTicks = () => cpuTicksOf('self');

let started: CpuTicks | null = null;
beforeAll(() => {
  started = cpuTicks();
});
// Registered before the clean-up, so it runs after it (after-hooks run last-registered first):
// the processes the clean-up stops are counted.
// biome-ignore lint/correctness/noEmptyPattern: vitest hands the file as the second argument and requires the first to be a pattern
afterAll(({}, file) => {
  const ended = cpuTicks();
  if (started && ended)
    Object.assign(file.meta, {
      [cpuTicksKey]: { self: ended.self - started.self, children: ended.children - started.children },
    });
});

// Loaded before every test file (vitest setupFiles): the helpers' clean-up runs after each
// test and each file, whether or not the file's modules were loaded fresh.
afterEach(runTestCleanups);
afterAll(runFileCleanups);
