import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOURNAL_VERSION, openJournal, type JournalFact } from '../../src/journal/journal.ts';
import { replayJournal } from '../../src/journal/journal-read.ts';
import { groupCommit, type LogSink } from '../../src/journal/state/group-commit.ts';

/**
 * A sink that records each call and lets the test decide when a write or a sync returns:
 * what a power cut would lose is what was not yet synced, which a real file cannot show.
 */
function heldSink() {
  const calls: string[] = [];
  const durable: string[] = [];
  let written = '';
  const held: Array<() => void> = [];
  const hold = (): Promise<void> => new Promise<void>((r) => held.push(r));
  const sink: LogSink = {
    write: async (data) => {
      calls.push(`write ${JSON.stringify(data)}`);
      await hold();
      written += data;
    },
    datasync: async () => {
      calls.push('datasync');
      const upTo = written;
      await hold();
      durable.push(upTo);
    },
    close: async () => {
      calls.push('close');
    },
  };
  /** Lets every write or sync under way return. */
  const release = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) {
      while (held.length > 0) held.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { sink, calls, durable: () => durable.at(-1) ?? '', release };
}

describe('journal group commit', () => {
  it('appends made during a sync share the next write and one fdatasync, in order', async () => {
    const { sink, calls, release } = heldSink();
    const log = groupCommit(sink);
    const first = log.append('a\n');
    // The flush starts at the end of this turn of the event loop.
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['write "a\\n"']);
    // While "a" is being written and synced, three more documents append.
    const rest = [log.append('b\n'), log.append('c\n'), log.append('d\n')];
    await release();
    await Promise.all([first, ...rest]);
    expect(calls).toEqual(['write "a\\n"', 'datasync', 'write "b\\nc\\nd\\n"', 'datasync']);
  });

  it('appends made in the same turn of the event loop share its one write and fdatasync', async () => {
    const { sink, calls, release } = heldSink();
    const log = groupCommit(sink);
    const all = [log.append('a\n'), log.append('b\n'), log.append('c\n')];
    await release();
    await Promise.all(all);
    expect(calls).toEqual(['write "a\\nb\\nc\\n"', 'datasync']);
  });

  it('an append resolves only after the fdatasync covering its line has returned', async () => {
    const { sink, durable, release } = heldSink();
    const log = groupCommit(sink);
    let resolved = false;
    const p = log.append('sending\n').then(() => {
      resolved = true;
      // At the moment the caller may send POST extract, its line is on disk.
      expect(durable()).toContain('sending\n');
    });
    await new Promise((r) => setImmediate(r));
    expect(resolved).toBe(false);
    await release();
    await p;
    expect(resolved).toBe(true);
  });

  it('a failed write rejects the appends of its batch and every later one', async () => {
    let n = 0;
    const sink: LogSink = {
      write: async () => {
        if (++n === 2) throw Object.assign(new Error('no space left'), { code: 'ENOSPC' });
      },
      datasync: async () => {},
      close: async () => {},
    };
    const log = groupCommit(sink);
    await log.append('a\n');
    await expect(log.append('b\n')).rejects.toMatchObject({ code: 'ENOSPC' });
    await expect(log.append('c\n')).rejects.toMatchObject({ code: 'ENOSPC' });
    await log.close();
  });

  it('the file journal: 200 concurrent facts, each on a whole line of its own, in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'group-commit-'));
    try {
      const path = join(dir, 'state.jsonl');
      const writer = await openJournal(path, false);
      const facts: JournalFact[] = Array.from({ length: 200 }, (_, i) => ({
        fact: 'sending',
        at: '2026-01-01T00:00:00.000Z',
        sha256: `sha${i}`,
        target: 't',
        file: `f${i}.pdf`,
        route: 'inline',
      }));
      await Promise.all(facts.map((f) => writer.append(f)));
      await writer.close();
      const text = await readFile(path, 'utf8');
      const replay = replayJournal(text);
      expect(replay.skipped).toBe(0);
      expect(replay.known.size).toBe(200);
      // A new journal starts with its format version (journal.ts versionFact), then the facts in order.
      expect(JSON.parse(text.split('\n')[0]!)).toMatchObject({ fact: 'journal', version: JOURNAL_VERSION });
      expect(text.split('\n').slice(1, 4)).toEqual(facts.slice(0, 3).map((f) => JSON.stringify(f)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a torn last line is ended before the first new fact', async () => {
    const { sink, calls, release } = heldSink();
    const log = groupCommit(sink, '\n');
    const p = log.append('x\n');
    await release();
    await p;
    expect(calls[0]).toBe('write "\\nx\\n"');
  });
});
