import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InputFile } from '../../src/batch/discover.ts';
import { discoverInputs } from '../../src/batch/discover/stream.ts';
import { fileFacts } from '../../src/batch/facts.ts';
import { openStatCache } from '../../src/batch/plan/stat-cache.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stat-cache-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const cachePath = (): string => join(dir, 'state.jsonl.stat-cache');
async function found(name: string): Promise<InputFile> {
  const { files } = await discoverInputs(['in'], { cwd: dir, ignore: [] });
  const file = files.find((f) => f.file === join('in', name));
  if (!file) throw new Error(`${name} not found`);
  return file;
}
/** Finds in/a.pdf, reads it, records it in a new cache as read at `readStartedMs`, saves the cache. */
async function recorded(readStartedMs: number): Promise<InputFile> {
  const file = await found('a.pdf');
  const cache = openStatCache(cachePath());
  cache.set(file, await fileFacts(file.path, file.size), readStartedMs);
  cache.save();
  return file;
}
/** A read that began well after the file's last change: not racy. */
const later = (): number => Date.now() + 10_000;

describe('stat cache', () => {
  beforeEach(() => {
    mkdirSync(join(dir, 'in'));
    writeFileSync(join(dir, 'in', 'a.pdf'), '%PDF-1.4 first content');
  });

  it('a file with the stamp recorded is not read again: the facts come from the cache, across a reopen', async () => {
    const file = await found('a.pdf');
    const { read: _, ...facts } = await fileFacts(file.path, file.size);
    const cache = openStatCache(cachePath());
    cache.set(file, facts, later());
    cache.save();
    expect(openStatCache(cachePath()).get(await found('a.pdf'))).toEqual(facts);
  });

  it('same size, mtime put back (touch -d, tar): the ctime tells, and the file is read again', async () => {
    // A whole second, so that putting it back is exact to the nanosecond.
    utimesSync(join(dir, 'in', 'a.pdf'), 1_700_000_000, 1_700_000_000);
    const file = await recorded(later());
    writeFileSync(file.path, '%PDF-1.4 other content');
    utimesSync(file.path, 1_700_000_000, 1_700_000_000);
    const changed = await found('a.pdf');
    expect(changed.size).toBe(file.size);
    // size:mtime:ctime:ino:dev: the same size and mtime, another ctime.
    expect(changed.stamp?.split(':').slice(0, 2)).toEqual(file.stamp?.split(':').slice(0, 2));
    expect(changed.stamp).not.toBe(file.stamp);
    // The kernel set ctime at the write (and at utimes): nobody can set it back.
    expect(openStatCache(cachePath()).get(changed)).toBeUndefined();
  });

  it('a file replaced by another (rename over it) has a new inode: read again', async () => {
    const file = await recorded(later());
    const [size, mtime, ctime, ino = '0', dev] = file.stamp?.split(':') ?? [];
    const replaced = { ...file, stamp: [size, mtime, ctime, String(BigInt(ino) + 1n), dev].join(':') };
    expect(openStatCache(cachePath()).get(replaced)).toBeUndefined();
  });

  it('a file name with a newline, a tab and a NUL-free oddity round-trips', async () => {
    const odd = 'we\nird\tname "q".pdf';
    writeFileSync(join(dir, 'in', odd), '%PDF-1.4 odd');
    const file = await found(odd);
    const { read: _, ...facts } = await fileFacts(file.path, file.size);
    const cache = openStatCache(cachePath());
    cache.set(file, facts, later());
    cache.save();
    const reopened = openStatCache(cachePath());
    expect(reopened.get(await found(odd))).toEqual(facts);
    expect(reopened.get(await found('a.pdf'))).toBeUndefined();
  });

  it('racy: a file changed within 2 s of the read is not recorded, so the next run reads it', async () => {
    const file = await recorded(Date.now());
    expect(openStatCache(cachePath()).get(file)).toBeUndefined();
  });

  it('a damaged cache is ignored, not trusted', async () => {
    const file = await recorded(later());
    const text = readFileSync(cachePath(), 'utf8');
    const damaged = text.replace(/[0-9a-f]{64}/, '0'.repeat(64));
    expect(damaged).not.toBe(text);
    writeFileSync(cachePath(), damaged);
    expect(openStatCache(cachePath()).get(file)).toBeUndefined();
  });
});

const input = (realPath: string, stamp: string): InputFile => ({
  file: realPath,
  path: realPath,
  realPath,
  size: 1,
  explicit: false,
  stamp,
});

describe('stat cache lookups in any order', () => {
  const facts = (n: number) => ({ sha256: `sha-${n}`, mimeType: n % 2 ? 'application/pdf' : 'image/png' });

  it('finds every entry whatever the order of lookups, and a changed stamp misses (a model of the cache)', async () => {
    const fc = (await import('fast-check')).default;
    const path = join(dir, 'prop.stat-cache');
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.string({ minLength: 1, maxLength: 6 }).filter((s) => !s.includes('\0')),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (names, order, changed) => {
          rmSync(path, { force: true });
          const paths = names.map((n) => `/r/${n}`);
          const first = openStatCache(path);
          for (const [i, p] of paths.entries()) {
            expect(first.get(input(p, `1:${i}:${i}:1:1`))).toBeUndefined();
            first.set(input(p, `1:${i}:${i}:1:1`), facts(i), Date.now());
          }
          first.save();
          const moved = new Set(changed.map((c) => c % paths.length));
          const cache = openStatCache(path);
          // The files in an order of the property's choosing, some more than once.
          const lookups = [...order.map((o) => o % paths.length), ...paths.keys()];
          for (const i of lookups) {
            const stamp = moved.has(i) ? `2:${i}:${i}:1:1` : `1:${i}:${i}:1:1`;
            expect(cache.get(input(paths[i]!, stamp))).toEqual(moved.has(i) ? undefined : facts(i));
          }
          expect(cache.get(input('/r/not there', '1:0:0:1:1'))).toBeUndefined();
        },
      ),
      { numRuns: 150, seed: 3 },
    );
  });

  it('a save keeps the files of this run in the order it looked them up, then the others the cache knew', () => {
    const path = join(dir, 'order.stat-cache');
    const first = openStatCache(path);
    for (const [i, p] of ['/r/a', '/r/b', '/r/c'].entries())
      first.set(input(p, `1:${i}:${i}:1:1`), facts(i), Date.now());
    first.save();
    const second = openStatCache(path);
    expect(second.get(input('/r/c', '1:2:2:1:1'))).toEqual(facts(2));
    expect(second.get(input('/r/a', '1:0:0:1:1'))).toEqual(facts(0));
    // A new file: looked up (a miss), read, recorded, as the planner does.
    expect(second.get(input('/r/d', '1:3:3:1:1'))).toBeUndefined();
    second.set(input('/r/d', '1:3:3:1:1'), facts(3), Date.now());
    second.save();
    const saved = readFileSync(path, 'utf8');
    const order = ['/r/c', '/r/a', '/r/d', '/r/b'].map((p) => saved.indexOf(`${p}\0`));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    const third = openStatCache(path);
    for (const [i, p] of ['/r/a', '/r/b', '/r/c', '/r/d'].entries())
      expect(third.get(input(p, `1:${i}:${i}:1:1`))).toEqual(facts(i));
  });
});

describe('stat cache over many runs (a model of it)', () => {
  it('every run finds what the runs before it recorded, replaced or forgotten, and each file is saved once', async () => {
    const fc = (await import('fast-check')).default;
    const path = join(dir, 'model.stat-cache');
    const run = fc.array(
      fc.record({ file: fc.nat({ max: 11 }), stamp: fc.nat({ max: 2 }), racy: fc.boolean(), read: fc.boolean() }),
      { maxLength: 14 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(run, { minLength: 1, maxLength: 5 }), async (runs) => {
        rmSync(path, { force: true });
        const model = new Map<string, { stamp: string; sha256: string }>();
        for (const [r, steps] of runs.entries()) {
          const cache = openStatCache(path);
          const seen = new Set<string>();
          for (const [i, step] of steps.entries()) {
            const p = `/m/${step.file}`;
            // A run looks each file up once (discovery dedupes by real path).
            if (seen.has(p)) continue;
            seen.add(p);
            const stamp = `1:${step.stamp}:${step.stamp}:1:1`;
            const known = model.get(p);
            const hit = known !== undefined && known.stamp === stamp;
            expect(cache.get(input(p, stamp))).toEqual(
              hit ? { sha256: known.sha256, mimeType: 'application/pdf' } : undefined,
            );
            if (hit || !step.read) continue;
            const sha256 = `sha-${r}-${i}`;
            // Racy: read within 2 s of the file's change (stamps are ms since 1970, so "now" is 1 s after it).
            cache.set(
              input(p, stamp),
              { sha256, mimeType: 'application/pdf' },
              step.racy ? step.stamp + 1_000 : Date.now(),
            );
            if (step.racy) model.delete(p);
            else model.set(p, { stamp, sha256 });
          }
          cache.save();
          cache.close();
          if (model.size === 0) continue;
          const saved = readFileSync(path, 'utf8');
          for (const p of model.keys()) expect(saved.split(`${p}\0`).length - 1).toBe(1);
        }
      }),
      { numRuns: 200, seed: 11 },
    );
  });

  it('holds no entry of a first run in memory until its save: 50,000 new files add a few numbers each', async () => {
    const { setFlagsFromString } = await import('node:v8');
    const { runInNewContext } = await import('node:vm');
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const cache = openStatCache(join(dir, 'big.stat-cache'));
    const long = 'x'.repeat(80);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 50_000; i++) {
      const file = input(`/big/${long}/${i}.pdf`, `1:${i}:${i}:${i}:1`);
      cache.get(file);
      cache.set(file, { sha256: i.toString(16).padStart(64, '0'), mimeType: 'application/pdf' }, Date.now());
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Held in memory, each entry's path, stamp and sha256 are ~250 bytes: 12 MB for 50,000.
    expect(grown).toBeLessThan(3_000_000);
    cache.save();
    cache.close();
    const again = openStatCache(join(dir, 'big.stat-cache'));
    expect(again.get(input(`/big/${long}/0.pdf`, '1:0:0:0:1'))?.sha256).toBe('0'.repeat(64));
  });
});
