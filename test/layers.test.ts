import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join, matchesGlob, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  IN_PROCESS_WORKERS,
  MEASURED,
  NOT_PROCESSES,
  PROCESSES,
  processWorkersFor,
  processWorkersNow,
  busyCores,
  STARTS_PROCESSES,
} from './layers.ts';

const ROOT = join(import.meta.dirname, '..');
const files = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => relative(ROOT, join(ROOT, 'test', f)))
  .sort();
const listed = (file: string, globs: string[]): boolean => globs.some((g) => matchesGlob(file, g));

describe('test layers (test/layers.ts)', () => {
  it('every file that starts the CLI, a server process, a browser or PostgreSQL runs with the process tests or the measured ones', () => {
    const strays = files.filter(
      (f) =>
        STARTS_PROCESSES.test(readFileSync(join(ROOT, f), 'utf8')) &&
        !listed(f, [...PROCESSES, ...MEASURED, ...NOT_PROCESSES]),
    );
    expect(strays, 'add them to PROCESSES in test/layers.ts').toEqual([]);
  });

  it('every name listed is a test file that exists (a file moved or renamed is not left behind)', () => {
    for (const glob of [...PROCESSES, ...MEASURED, ...NOT_PROCESSES])
      expect(
        files.some((f) => matchesGlob(f, glob)),
        glob,
      ).toBe(true);
  });
});

describe('how many process-test files run at once (processWorkersFor)', () => {
  it('runs them in one pool of 3 on a quiet machine, 2 after the rest when half its cores are busy', () => {
    expect(processWorkersFor({}, 0.4, 2)).toBe(IN_PROCESS_WORKERS);
    expect(processWorkersFor({}, 0.99, 2)).toBe(IN_PROCESS_WORKERS);
    expect(processWorkersFor({}, 1, 2)).toBe(2);
    expect(processWorkersFor({}, 2, 2)).toBe(2);
    expect(processWorkersFor({}, 1.5, 4)).toBe(IN_PROCESS_WORKERS);
  });

  it('how busy: the share of the sampled time the cores were busy, in cores (not the load average)', async () => {
    const times = (user: number, idle: number) => ({
      times: { user, nice: 0, sys: 0, idle, irq: 0 },
      model: '',
      speed: 0,
    });
    const samples = [
      [times(100, 100), times(100, 100)],
      // one core busy throughout, the other idle throughout
      [times(200, 100), times(100, 200)],
    ];
    expect(await busyCores(1, () => samples.shift()!)).toBeCloseTo(1, 5);
    const quiet = [[times(0, 0)], [times(10, 290)]];
    expect(await busyCores(1, () => quiet.shift()!)).toBeCloseTo(0.0333, 3);
    const now = await busyCores(50);
    expect(now).toBeGreaterThanOrEqual(0);
    expect(now).toBeLessThanOrEqual(cpus().length);
  });

  it('the layout now: EXTRACT_TEST_PROCESS_WORKERS is taken without sampling; else the sample decides', async () => {
    let sampled = 0;
    const busy = (cores: number) => async () => {
      sampled++;
      return cores;
    };
    expect(await processWorkersNow({ EXTRACT_TEST_PROCESS_WORKERS: '1' }, busy(0))).toBe(1);
    expect(sampled).toBe(0);
    expect(await processWorkersNow({}, busy(0.2))).toBe(IN_PROCESS_WORKERS);
    expect(await processWorkersNow({}, busy(availableParallelism()))).toBe(2);
    expect(sampled).toBe(2);
  });

  it('EXTRACT_TEST_PROCESS_WORKERS chooses, whatever the load; a value it cannot use is ignored', () => {
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: '1' }, 0.1, 2)).toBe(1);
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: '3' }, 9, 2)).toBe(3);
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: '2' }, 0.1, 2)).toBe(2);
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: 'lots' }, 9, 2)).toBe(2);
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: '0' }, 0.1, 2)).toBe(IN_PROCESS_WORKERS);
  });
});
