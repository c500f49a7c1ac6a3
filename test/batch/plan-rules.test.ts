import { describe, expect, it } from 'vitest';
import { emptyFileRule, hashesWhileSending } from '../../src/batch/plan/jobs.ts';
import type { InputFile } from '../../src/batch/discover.ts';

/** The plan's inner rules, in-process: what an empty file comes to, and which files are hashed on their upload. */

const file = (size: number, explicit: boolean): InputFile => ({
  path: '/in/a.pdf',
  realPath: '/in/a.pdf',
  file: 'a.pdf',
  size,
  explicit,
});

describe('emptyFileRule', () => {
  it('an empty file found in a folder is skipped; named by itself or with --all-files it is refused', () => {
    expect(emptyFileRule(file(0, false), false)).toBe('skip');
    expect(emptyFileRule(file(0, true), false)).toBe('refuse');
    expect(emptyFileRule(file(0, false), true)).toBe('refuse');
  });
  it('a file with bytes is read', () => {
    expect(emptyFileRule(file(1, false), false)).toBeUndefined();
    expect(emptyFileRule(file(1, true), true)).toBeUndefined();
  });
});

describe('hashesWhileSending', () => {
  const upload = { route: 'upload', why: 'large' } as const;
  it('a large uncached file sent by upload is hashed on its upload', () => {
    expect(hashesWhileSending(false, 100, 101, upload)).toBe(true);
  });
  it('not when the stat cache knows it, it is at or under the size, the rule is off, or it is sent inline', () => {
    expect(hashesWhileSending(true, 100, 101, upload)).toBe(false);
    expect(hashesWhileSending(false, 100, 100, upload)).toBe(false);
    expect(hashesWhileSending(false, undefined, 101, upload)).toBe(false);
    expect(hashesWhileSending(false, 100, 101, { route: 'inline', why: 'small' })).toBe(false);
  });
});
