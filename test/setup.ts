import { aroundAll } from 'vitest';
import { cpuTicksOf } from './helpers/proc.ts';
import { cpuTicksKey } from './slowest-files.ts';

/**
 * The CPU a file spent, its worker's own and that of the processes it started and waited for,
 * shown by test/slowest-files.ts (null where /proc is not there). Read around the whole file, so
 * the processes its file-scoped fixtures (test/helpers/fixtures.ts) stop after its afterAll hooks
 * are counted too.
 */
const cpuTicks = () => cpuTicksOf('self');

// biome-ignore lint/correctness/noEmptyPattern: vitest hands the file as the third argument and requires the second to be a pattern
aroundAll(async (runSuite, {}, file) => {
  const started = cpuTicks();
  await runSuite();
  const ended = cpuTicks();
  if (started && ended)
    Object.assign(file.meta, {
      [cpuTicksKey]: { self: ended.self - started.self, children: ended.children - started.children },
    });
});
