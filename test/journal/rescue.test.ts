import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JournalFact } from '../../src/journal/journal.ts';
import type { StateJournal } from '../../src/journal/state/journal-state.ts';
import { memoryState } from '../../src/journal/state/memory.ts';
import {
  type JournalWriteError,
  type RescuePlaces,
  readRescued,
  rescuePlacesFor,
  rescuing,
  takeBackRescued,
} from '../../src/journal/state/rescue.ts';
import { tempDir } from '../helpers/cli.ts';

/**
 * The guard every backend is opened through (PostgreSQL's as much as the files'): a refused
 * write stops sending once, keeps what comes after, and leaves it only in private places.
 */

const at = '2026-11-28T02:00:00.000Z';
const completed = (n: number): JournalFact => ({
  fact: 'completed',
  at,
  sha256: String(n).padStart(64, '0'),
  target: 't',
  file: `in/${n}.pdf`,
  route: 'inline',
  document_id: `doc_${n}`,
  page_count: 1,
  results: { total: n },
});

/** A backend that takes `room` facts, then refuses every write as a full disk does. */
function filling(room: number): StateJournal & { taken: JournalFact[] } {
  const inner = memoryState('db');
  const taken: JournalFact[] = [];
  return {
    ...inner,
    where: 'postgres://***@db/extract',
    taken,
    append: async (fact) => {
      if (taken.length >= room) throw Object.assign(new Error('could not extend file'), { code: 'ENOSPC' });
      taken.push(fact);
    },
  };
}

/** The runtime folder's place only (the shared temporary folder's is left out of a test). */
function places(dir: string, more: string[] = []): RescuePlaces {
  const all = rescuePlacesFor('postgres://***@db/extract', false, { XDG_RUNTIME_DIR: dir });
  const prefix = all.folders[0]!.prefix;
  expect(all.folders.map((f) => f.dir)).toContain(join(dir, 'extract-rescue'));
  return { journal: all.journal, folders: [join(dir, 'extract-rescue'), ...more].map((d) => ({ dir: d, prefix })) };
}

describe('the rescue of a refused journal', () => {
  it('stops sending once, refuses `sending`, keeps the rest, and leaves it in a 0600 file of a 0700 folder; the next run takes it back', async () => {
    const runtime = tempDir('extract-rescue-test-');
    const inner = filling(1);
    const failures: JournalWriteError[] = [];
    const logs: string[] = [];
    const j = rescuing(
      inner,
      places(runtime),
      (_level, line) => logs.push(line),
      (err) => failures.push(err),
    );
    await j.append(completed(0));
    await j.append(completed(1));
    await j.append(completed(2));
    await expect(
      j.append({ fact: 'sending', at, sha256: '9'.repeat(64), target: 't', file: 'x', route: 'inline' }),
    ).rejects.toMatchObject({ code: 'state' });
    await expect(j.claim(['k'], 1)).rejects.toMatchObject({ code: 'state' });
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toMatch(/could not be written \(the disk is full\): stopped sending/);
    await j.close();
    expect(inner.taken.map((f) => f.fact === 'completed' && f.document_id)).toEqual(['doc_0']);
    const folder = join(runtime, 'extract-rescue');
    const [file, ...more] = readdirSync(folder);
    expect(more).toEqual([]);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(join(folder, file!)).mode & 0o777).toBe(0o600);
    expect(logs.join('\n')).toMatch(/doc_1, doc_2/);

    const next = filling(10);
    await takeBackRescued(next, places(runtime), () => {});
    expect(next.taken.map((f) => f.fact === 'completed' && f.document_id)).toEqual(['doc_1', 'doc_2']);
    expect(readdirSync(folder)).toEqual([]);
  });

  it('a rescue folder that is a link, or open to others, is neither written nor read', async () => {
    const runtime = tempDir('extract-rescue-test-');
    const elsewhere = tempDir('extract-elsewhere-');
    symlinkSync(elsewhere, join(runtime, 'extract-rescue'));
    const logs: string[] = [];
    const j = rescuing(
      filling(0),
      places(runtime),
      (_level, line) => logs.push(line),
      () => {},
    );
    await j.append(completed(1));
    await j.close();
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(logs.join('\n')).toMatch(/nor could a rescue file .*not a private folder.*doc_1/);
    // With a private place after it, the facts go there.
    const next = tempDir('extract-rescue-next-');
    const k = rescuing(
      filling(0),
      places(runtime, [join(next, 'r')]),
      () => {},
      () => {},
    );
    await k.append(completed(2));
    await k.close();
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readdirSync(join(next, 'r'))).toHaveLength(1);

    const open = tempDir('extract-rescue-test-');
    mkdirSync(join(open, 'extract-rescue'));
    chmodSync(join(open, 'extract-rescue'), 0o777);
    writeFileSync(
      join(open, 'extract-rescue', `${places(open).folders[0]!.prefix}planted.jsonl`),
      `${JSON.stringify(completed(7))}\n`,
    );
    const warned: string[] = [];
    expect(await readRescued(places(open), (_level, line) => warned.push(line))).toEqual([]);
    expect(warned.join('\n')).toMatch(/not a private folder/);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "a rescue file another user owns is never taken in (as root: chown to nobody's uid)",
    async () => {
      const runtime = tempDir('extract-rescue-test-');
      const folder = join(runtime, 'extract-rescue');
      mkdirSync(folder, { mode: 0o700 });
      const planted = join(folder, `${places(runtime).folders[0]!.prefix}planted.jsonl`);
      writeFileSync(planted, `${JSON.stringify(completed(7))}\n`, { mode: 0o600 });
      chownSync(planted, 65534, 65534);
      const warned: string[] = [];
      const next = filling(10);
      await takeBackRescued(next, places(runtime), (_level, line) => warned.push(line));
      expect(next.taken).toEqual([]);
      expect(existsSync(planted)).toBe(true);
      expect(warned.join('\n')).toMatch(/not a private file of this user/);
    },
  );
});
