import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJournal, replayJournal } from '../../src/journal/journal-read.ts';
import { openJournal, stateKey, type JournalFact } from '../../src/journal/journal.ts';
import { acquireLock, lockPathFor } from '../../src/journal/lock.ts';

const common = { at: '2026-01-01T00:00:00.000Z', sha256: 'abc', target: 't1', file: 'a.pdf' };
const line = (f: JournalFact): string => `${JSON.stringify(f)}\n`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('journal', () => {
  it('the latest fact of a document wins', () => {
    const text =
      line({ fact: 'sending', ...common, route: 'upload' }) +
      line({ fact: 'submitted', ...common, route: 'upload', document_id: 'doc_1' }) +
      line({
        fact: 'completed',
        ...common,
        route: 'upload',
        document_id: 'doc_1',
        page_count: 2,
        results: { total: null },
      });
    const { known } = replayJournal(text);
    expect(known.get(stateKey('abc', 't1'))).toMatchObject({
      fact: 'completed',
      page_count: 2,
      results: { total: null },
    });
  });

  it('ignores a torn last line', () => {
    const text = `${line({ fact: 'submitted', ...common, route: 'upload', document_id: 'doc_1' })}{"fact":"completed","at":"2026`;
    const replay = replayJournal(text);
    expect(replay.torn).toBe(true);
    expect(replay.skipped).toBe(1);
    expect(replay.known.get(stateKey('abc', 't1'))?.fact).toBe('submitted');
  });

  it('another target is another document', () => {
    const { known } = replayJournal(line({ fact: 'submitted', ...common, route: 'inline', document_id: 'd' }));
    expect(known.get(stateKey('abc', 't2'))).toBeUndefined();
  });

  it('unsent forgets an uncertain send; a (legacy) reset forgets everything before it', () => {
    const a = replayJournal(
      line({ fact: 'sending', ...common, route: 'inline' }) + line({ fact: 'unsent', ...common, route: 'inline' }),
    );
    expect(a.known.size).toBe(0);
    const b = replayJournal(
      line({ fact: 'failed', ...common, route: null, document_id: null, reason: 'x', retryable: true }) +
        line({ fact: 'reset', at: common.at }),
    );
    expect(b.known.size).toBe(0);
  });

  it('a fact that says nothing happened at the service never erases what was known', () => {
    const completed = line({
      fact: 'completed',
      ...common,
      route: 'inline',
      document_id: 'doc_1',
      page_count: 2,
      results: {},
    });
    // --fresh resent it; the service refused (401): sending, then unsent.
    const refused = replayJournal(
      completed +
        line({ fact: 'sending', ...common, route: 'inline' }) +
        line({ fact: 'unsent', ...common, route: 'inline' }),
    );
    expect(refused.known.get(stateKey('abc', 't1'))).toMatchObject({ fact: 'completed', document_id: 'doc_1' });
    // --fresh could not connect: a failure that cost nothing.
    const down = replayJournal(
      completed +
        line({
          fact: 'failed',
          ...common,
          route: 'upload',
          document_id: null,
          reason: 'ECONNREFUSED',
          retryable: true,
          charge: 'none',
        }),
    );
    expect(down.known.get(stateKey('abc', 't1'))).toMatchObject({ fact: 'completed' });
    // An uncertain send stays uncertain when its --retry-failed resend is refused.
    const sending = line({
      fact: 'sending',
      ...common,
      route: 'inline',
      request: { idempotency_key: 'k', file_name: 'a.pdf', file_type: 'application/pdf' },
    });
    const resent = replayJournal(
      sending +
        line({ fact: 'sending', ...common, route: 'inline' }) +
        line({ fact: 'unsent', ...common, route: 'inline' }),
    );
    expect(resent.known.get(stateKey('abc', 't1'))).toMatchObject({
      fact: 'sending',
      request: { idempotency_key: 'k' },
    });
    // A no-cost failure of a new document is what is known of it.
    const fresh = replayJournal(
      line({
        fact: 'failed',
        ...common,
        route: 'upload',
        document_id: null,
        reason: 'x',
        retryable: true,
        charge: 'none',
      }),
    );
    expect(fresh.known.get(stateKey('abc', 't1'))?.fact).toBe('failed');
  });

  it('appends after a torn line on a fresh line', async () => {
    const path = join(dir, 'state.jsonl');
    await writeFile(
      path,
      `${line({ fact: 'submitted', ...common, route: 'upload', document_id: 'doc_1' })}{"fact":"compl`,
    );
    const before = await readJournal(path);
    const writer = await openJournal(path, before.torn);
    await writer.append({
      fact: 'completed',
      ...common,
      route: 'upload',
      document_id: 'doc_1',
      page_count: 3,
      results: {},
    });
    await writer.close();
    const after = await readJournal(path);
    expect(after.known.get(stateKey('abc', 't1'))).toMatchObject({ fact: 'completed', page_count: 3 });
    expect((await readFile(path, 'utf8')).endsWith('\n')).toBe(true);
  });

  it('a missing journal is an empty one', async () => {
    expect((await readJournal(join(dir, 'none.jsonl'))).known.size).toBe(0);
  });
});

describe('lock', () => {
  const deps = (pid: number, alive: (pid: number) => boolean) => ({ pid, host: 'h1', isAlive: alive, now: () => 0 });

  it('refuses a second run while the holder lives, naming it', async () => {
    const journal = join(dir, 'state.jsonl');
    const lock = await acquireLock(
      journal,
      deps(100, () => true),
    );
    await expect(
      acquireLock(
        journal,
        deps(200, () => true),
      ),
    ).rejects.toThrow(/in use by process 100/);
    await lock.release();
    const again = await acquireLock(
      journal,
      deps(200, () => true),
    );
    await again.release();
  });

  it('takes over a stale lock of a dead process', async () => {
    const journal = join(dir, 'state.jsonl');
    await acquireLock(
      journal,
      deps(100, () => true),
    );
    const lock = await acquireLock(
      journal,
      deps(200, (pid) => pid !== 100),
    );
    expect(JSON.parse(await readFile(lockPathFor(journal), 'utf8'))).toMatchObject({ pid: 200, host: 'h1' });
    await lock.release();
  });

  it('takes over a torn lock file: the lock is then ours, holds off others, and goes on release', async () => {
    const journal = join(dir, 'state.jsonl');
    await writeFile(lockPathFor(journal), '{"pid":');
    const lock = await acquireLock(
      journal,
      deps(300, () => true),
    );
    expect(JSON.parse(await readFile(lockPathFor(journal), 'utf8'))).toMatchObject({ pid: 300, host: 'h1' });
    await expect(
      acquireLock(
        journal,
        deps(400, () => true),
      ),
    ).rejects.toThrow(/in use by process 300/);
    await lock.release();
    await expect(readFile(lockPathFor(journal), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a lock held on another host', async () => {
    const journal = join(dir, 'state.jsonl');
    await writeFile(lockPathFor(journal), JSON.stringify({ pid: 1, host: 'other', started: 'x' }));
    await expect(
      acquireLock(
        journal,
        deps(300, () => false),
      ),
    ).rejects.toThrow(/on other/);
  });
});
