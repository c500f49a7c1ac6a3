import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/outputs/atomic.ts';
import { writeOutputs } from '../../src/outputs/write.ts';
import { resolveOutput } from '../../src/outputs/target.ts';
import { SAMPLE, useTempDirs } from './helpers.ts';

const tempDir = useTempDirs();

/** The text cut into chunks at the given points (chunk sizes vary, as records do; a chunk is whole characters, as a record is). */
function chunked(text: string, cuts: number[]): string[] {
  const whole = (p: number): number => (/[\uD800-\uDBFF]/.test(text[p - 1] ?? '') ? p + 1 : p);
  const points = [...new Set(cuts.map((c) => whole(c % (text.length + 1))))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

describe('writeFileAtomic', () => {
  it('a target that already holds the same bytes is left as it is: same inode, same mtime, no temp file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'out.jsonl');
    // Several write batches (256 KB each), some characters multi-byte.
    const text = 'é{"a":1}\n'.repeat(100_000);
    await writeFileAtomic(path, chunked(text, [7, 300_000, 512_000]));
    const before = await stat(path);
    await new Promise((r) => setTimeout(r, 20));
    await writeFileAtomic(path, chunked(text, [1, 99_999]));
    const after = await stat(path);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(await readdir(dir)).toEqual(['out.jsonl']);
  });

  it('a rerun of writeOutputs with the same records rewrites nothing; other records replace the file', async () => {
    const cwd = await tempDir();
    const target = resolveOutput({ out: 'r.csv', cwd });
    await writeOutputs(target, SAMPLE, { cwd });
    const first = await stat(join(cwd, 'r.csv'));
    await writeOutputs(target, SAMPLE, { cwd });
    expect((await stat(join(cwd, 'r.csv'))).ino).toBe(first.ino);
    await writeOutputs(target, SAMPLE.slice(1), { cwd });
    expect((await stat(join(cwd, 'r.csv'))).ino).not.toBe(first.ino);
  });

  it('whatever the target held (equal, a prefix, longer, differing anywhere), the file ends with exactly the new bytes', async () => {
    const dir = await tempDir();
    const path = join(dir, 'out.txt');
    const unit = fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' });
    await fc.assert(
      fc.asyncProperty(
        unit,
        fc.integer({ min: 0, max: 70_000 }),
        fc.option(fc.tuple(fc.nat(), unit), { nil: undefined }),
        fc.constantFrom('same', 'shorter', 'longer', 'none'),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (piece, times, edit, old, cuts) => {
          const text = piece.repeat(times);
          let previous: string | undefined =
            old === 'same'
              ? text
              : old === 'shorter'
                ? text.slice(0, text.length >> 1)
                : old === 'longer'
                  ? `${text}tail`
                  : undefined;
          if (previous !== undefined && edit !== undefined) {
            const at = edit[0] % (previous.length + 1);
            previous = previous.slice(0, at) + edit[1] + previous.slice(at + 1);
          }
          if (previous === undefined) await rm(path, { force: true });
          else await writeFile(path, previous);
          await writeFileAtomic(path, chunked(text, cuts));
          expect(await readFile(path, 'utf8')).toBe(text);
          expect(await readdir(dir)).toEqual(['out.txt']);
        },
      ),
      { numRuns: 60, seed: 14 },
    );
  });
});
