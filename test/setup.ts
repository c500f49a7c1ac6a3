import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { runFileCleanups, runTestCleanups } from './helpers/cleanup.ts';
import { type CpuTicks, cpuTicksKey } from './slowest-files.ts';

/**
 * The CPU a file spent, its worker's own and that of the processes it started and waited for
 * (the kernel's utime + stime, cutime + cstime), shown by test/slowest-files.ts. Null where
 * /proc is not there.
 */
function cpuTicks(): CpuTicks | null {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    const at = (i: number) => Number(fields[i]) || 0;
    return { self: at(11) + at(12), children: at(13) + at(14) };
  } catch {
    return null;
  }
}

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
