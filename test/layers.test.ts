import { readFileSync, readdirSync } from 'node:fs';
import { join, matchesGlob, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MEASURED, NOT_PROCESSES, PROCESSES, STARTS_PROCESSES } from './layers.ts';

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
