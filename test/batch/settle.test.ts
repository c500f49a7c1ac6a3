import { describe, expect, it } from 'vitest';
import type { InputFile } from '../../src/batch/discover.ts';
import { settledOnly } from '../../src/batch/plan/settle.ts';

/** --settle's rule on an injected clock and stat: changed within the window (mtime or ctime) waits for the next run. */

const NOW = Date.parse('2026-11-23T02:00:00.000Z');
const input = (file: string): InputFile => ({
  file,
  path: `/drop/${file}`,
  realPath: `/drop/${file}`,
  size: 10,
  explicit: false,
});

describe('settle: what a batch run leaves for the next one', () => {
  const times: Record<string, { mtimeMs: number; ctimeMs: number } | Error> = {
    'old.pdf': { mtimeMs: NOW - 60_000, ctimeMs: NOW - 60_000 },
    'writing.pdf': { mtimeMs: NOW - 400, ctimeMs: NOW - 400 },
    // cp -p: the original's mtime, but every write moves ctime.
    'copied-with-times.pdf': { mtimeMs: NOW - 86_400_000, ctimeMs: NOW - 1_000 },
    'just-settled.pdf': { mtimeMs: NOW - 5_000, ctimeMs: NOW - 5_000 },
    // Another machine's clock an hour ahead (a share): not a write under way.
    'skewed.pdf': { mtimeMs: NOW + 3_600_000, ctimeMs: NOW + 3_600_000 },
    'gone.pdf': Object.assign(new Error('ENOENT'), { code: 'ENOENT' }),
  };
  const stat = (path: string | Buffer) => {
    const t = times[String(path).replace('/drop/', '')];
    if (t === undefined || t instanceof Error) throw t ?? new Error('unknown');
    return t;
  };
  const all = Object.keys(times).map(input);

  it('settle: a file changed within the window (mtime, or ctime for a copy that kept its mtime) is left, with how long ago; the rest go on', () => {
    const r = settledOnly(all, 5_000, NOW, stat);
    expect(r.unsettled).toEqual([
      { file: 'writing.pdf', changed_ms_ago: 400 },
      { file: 'copied-with-times.pdf', changed_ms_ago: 1_000 },
    ]);
    // A file that cannot be stat'ed goes on to the plan, which reports it.
    expect(r.files.map((f) => f.file)).toEqual(['old.pdf', 'just-settled.pdf', 'skewed.pdf', 'gone.pdf']);
  });

  it('settle: a partial download found in a folder waits whatever the window; one gone since the walk is no longer listed', () => {
    const partial = { ...input('a.pdf.part'), path: '/drop/old.pdf' };
    const renamed = { ...input('b.pdf.crdownload'), path: '/drop/gone.pdf' };
    const named = { ...input('c.pdf.part'), explicit: true };
    const r = settledOnly([partial, renamed, named], 0, NOW, stat);
    expect(r.unsettled).toEqual([{ file: 'a.pdf.part', changed_ms_ago: 60_000, reason: 'partial download' }]);
    expect(r.files.map((f) => f.file)).toEqual(['c.pdf.part']);
  });

  it('settle: off (0) keeps every file without a stat', () => {
    const r = settledOnly(all, 0, NOW, () => {
      throw new Error('no stat expected');
    });
    expect(r.files).toHaveLength(all.length);
    expect(r.unsettled).toEqual([]);
  });
});
