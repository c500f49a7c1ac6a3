import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExtractError } from '../../src/errors.ts';
import { isStreamed, prepareOutput, resolveOutput } from '../../src/outputs/target.ts';
import { useTempDirs } from './helpers.ts';

const tempDir = useTempDirs();

function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof ExtractError && err.code === 'usage') return err.message;
    throw err;
  }
  throw new Error('expected a usage error');
}

describe('resolveOutput', () => {
  it('output: no -o, or -o -, streams JSON Lines to stdout', () => {
    for (const out of [undefined, '-']) {
      const target = resolveOutput({ out, cwd: '/w' });
      expect(target).toEqual({ kind: 'stdout', format: 'jsonl' });
      expect(isStreamed(target)).toBe(true);
    }
    const csv = resolveOutput({ out: '-', format: 'csv', cwd: '/w' });
    expect(csv).toEqual({ kind: 'stdout', format: 'csv' });
    expect(isStreamed(csv)).toBe(false);
  });

  it('output: the extension picks the format, case-insensitively', async () => {
    const cwd = await tempDir();
    expect(resolveOutput({ out: 'r.json', cwd })).toEqual({ kind: 'file', format: 'json', path: join(cwd, 'r.json') });
    expect(resolveOutput({ out: 'r.JSONL', cwd })).toMatchObject({ format: 'jsonl' });
    expect(resolveOutput({ out: 'r.ndjson', cwd })).toMatchObject({ format: 'jsonl' });
    expect(resolveOutput({ out: 'out/r.csv', cwd })).toEqual({
      kind: 'file',
      format: 'csv',
      path: join(cwd, 'out/r.csv'),
    });
  });

  it('output: a path ending in / or an existing directory is a directory output', async () => {
    const cwd = await tempDir();
    await mkdir(join(cwd, 'results.json'));
    expect(resolveOutput({ out: 'new/', cwd })).toEqual({ kind: 'dir', path: join(cwd, 'new') });
    expect(resolveOutput({ out: 'results.json', cwd })).toEqual({ kind: 'dir', path: join(cwd, 'results.json') });
  });

  it('output: --format overrides the extension', async () => {
    const cwd = await tempDir();
    expect(resolveOutput({ out: 'r.txt', format: 'csv', cwd })).toMatchObject({ kind: 'file', format: 'csv' });
    expect(resolveOutput({ out: 'r.json', format: 'ndjson', cwd })).toMatchObject({ kind: 'file', format: 'jsonl' });
    expect(resolveOutput({ out: 'results', format: 'dir', cwd })).toEqual({ kind: 'dir', path: join(cwd, 'results') });
  });

  it('output: an unknown extension or format is a usage error that says what to do', async () => {
    const cwd = await tempDir();
    expect(usageMessage(() => resolveOutput({ out: 'r.txt', cwd }))).toMatch(
      /\.json, \.jsonl, \.ndjson or \.csv.*--format/,
    );
    expect(usageMessage(() => resolveOutput({ out: 'r.csv', format: 'xml', cwd }))).toMatch(
      /unknown --format "xml": use json, jsonl, csv or dir/,
    );
    expect(usageMessage(() => resolveOutput({ format: 'dir', cwd }))).toMatch(/-o DIR\//);
  });

  it('output: a file format onto a directory, or a directory onto a file, is refused up front', async () => {
    const cwd = await tempDir();
    await mkdir(join(cwd, 'd'));
    await writeFile(join(cwd, 'f'), 'x');
    expect(usageMessage(() => resolveOutput({ out: 'd', format: 'csv', cwd }))).toMatch(/is a directory/);
    expect(usageMessage(() => resolveOutput({ out: 'f', format: 'dir', cwd }))).toMatch(/is a file/);
  });

  it('output: prepareOutput creates the directory and refuses one it cannot create', async () => {
    const cwd = await tempDir();
    await prepareOutput(resolveOutput({ out: 'a/b/r.csv', cwd }));
    await prepareOutput(resolveOutput({ out: 'tree/', cwd }));
    await writeFile(join(cwd, 'blocker'), 'x');
    await expect(prepareOutput(resolveOutput({ out: 'blocker/sub/r.csv', cwd }))).rejects.toThrow(
      /cannot write the output in .*choose another -o/,
    );
  });
});
