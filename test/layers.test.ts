import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IN_PROCESS_WORKERS, PROC_SUFFIX, processWorkersFor, STARTS_PROCESSES } from './layers.ts';

const ROOT = join(import.meta.dirname, '..');
const files = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => relative(ROOT, join(ROOT, 'test', f)))
  .sort();

describe('test layers (test/layers.ts)', () => {
  it('every file that starts the CLI, a server process, a browser or PostgreSQL is named .proc.test.ts', () => {
    const strays = files.filter(
      (f) => !f.endsWith(PROC_SUFFIX) && STARTS_PROCESSES.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(strays, `rename them to *${PROC_SUFFIX} (git mv)`).toEqual([]);
  });
});

describe('how many process-test files run at once (processWorkersFor)', () => {
  it('2, after the in-process files, unless EXTRACT_TEST_PROCESS_WORKERS chooses 1, 2 or 3', () => {
    expect(processWorkersFor({})).toBe(2);
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: '1' })).toBe(1);
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: '3' })).toBe(IN_PROCESS_WORKERS);
  });

  it('a value it cannot use is ignored', () => {
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: 'lots' })).toBe(2);
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: '0' })).toBe(2);
    expect(processWorkersFor({ EXTRACT_TEST_PROCESS_WORKERS: '4' })).toBe(2);
  });
});
