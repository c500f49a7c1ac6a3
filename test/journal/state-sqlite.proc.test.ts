import { chmodSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import fc from 'fast-check';
import { describe, expect, it, onTestFinished } from 'vitest';
import { replayer, stateKey, type JournalFact } from '../../src/journal/journal.ts';
import { openState, parseStateSpec, type StateJournal } from '../../src/journal/state/index.ts';
import { journalRefusal } from '../../src/journal/state/sqlite-guard.ts';
import { CLAIMS_BY_KEY, openSqliteWriter } from '../../src/journal/state/sqlite.ts';
import type { SqliteState } from '../../src/journal/state/sqlite-state.ts';
import { ExtractError } from '../../src/errors.ts';
import { tempDir } from '../helpers/cli.ts';

/**
 * What only the SQLite journal does (the rules it shares with the others are in state.proc.test.ts):
 * which paths name it, its per-document replay agreeing with a replay of every fact, importing
 * an older journal once, and the files it refuses.
 */

const log = () => {};
const key = (sha256: string) => stateKey(sha256, 't1');
const common = (sha256: string, at = '2026-01-01T00:00:00.000Z') => ({
  at,
  sha256,
  target: 't1',
  file: `${sha256}.pdf`,
});

async function open(path: string, readOnly = false): Promise<StateJournal> {
  const s = await openState({ kind: 'sqlite', path }, { readOnly, leaseMs: 30_000, log });
  onTestFinished(() => s.close());
  return s;
}

/** What only SQLite does (importFacts) is on its class, not on the journal interface. */
async function writer(path: string): Promise<SqliteState> {
  const s = await openSqliteWriter(path, { readOnly: false, leaseMs: 30_000, log });
  onTestFinished(() => s.close());
  return s;
}

function journalPath(): string {
  return join(tempDir('extract-sqlite-state-'), 'journal.sqlite');
}

describe('sqlite journal: what opening it says', () => {
  it('a new journal is made without a word at info (-v shows it); opening it again says nothing', async () => {
    const path = journalPath();
    const lines: Array<[string, string]> = [];
    const said = (level: string, message: string) => lines.push([level, message]);
    const first = await openState({ kind: 'sqlite', path }, { readOnly: false, leaseMs: 30_000, log: said });
    await first.close();
    expect(lines.filter(([level]) => level !== 'debug')).toEqual([]);
    expect(lines).toContainEqual(['debug', `${path}: journal tables created (schema version 1)`]);
    lines.length = 0;
    const again = await openState({ kind: 'sqlite', path }, { readOnly: false, leaseMs: 30_000, log: said });
    await again.close();
    expect(lines.filter(([, message]) => message.includes('journal tables'))).toEqual([]);
  });
});

describe('sqlite journal: which --state names it', () => {
  it('a path ending in .sqlite, .sqlite3 or .db (any case), or sqlite:PATH; other paths stay JSON Lines', () => {
    for (const name of ['j.sqlite', 'j.SQLITE3', 'dir/j.db', 'j.Db'])
      expect(parseStateSpec(name, '/w')).toEqual({ kind: 'sqlite', path: `/w/${name}` });
    expect(parseStateSpec('sqlite:j.state', '/w')).toEqual({ kind: 'sqlite', path: '/w/j.state' });
    expect(parseStateSpec('sqlite:/abs/j', '/w')).toEqual({ kind: 'sqlite', path: '/abs/j' });
    for (const name of ['j.jsonl', '.extract-state.jsonl', 'j.dbx', 'sqlite.jsonl'])
      expect(parseStateSpec(name, '/w')).toEqual({ kind: 'file', path: `/w/${name}` });
    expect(() => parseStateSpec('sqlite:', '/w')).toThrow(/names no file/);
  });
});

// `parser` is a fact about no document, between those about documents: it must change none of them.
const KINDS = [
  'sending',
  'unsent',
  'submitted',
  'completed',
  'failed-none',
  'failed-uncertain',
  'failed-refunded',
  'parser',
];

function factOf(kind: string, sha: string, n: number): JournalFact {
  const c = { ...common(sha), route: 'upload' as const };
  switch (kind) {
    case 'sending':
      return { fact: 'sending', ...c };
    case 'unsent':
      return { fact: 'unsent', ...c };
    case 'submitted':
      return { fact: 'submitted', ...c, document_id: `doc_${n}` };
    case 'completed':
      return { fact: 'completed', ...c, document_id: `doc_${n}`, page_count: n % 3, results: { n, note: null } };
    case 'parser':
      return { fact: 'parser', at: c.at, target: `key_${n}`, parser: 't1' };
    default: {
      const charge = kind === 'failed-none' ? 'none' : kind === 'failed-uncertain' ? 'uncertain' : 'refunded';
      return {
        fact: 'failed',
        ...c,
        document_id: charge === 'refunded' ? `doc_${n}` : null,
        reason: 'x',
        retryable: true,
        charge,
      };
    }
  }
}

describe('sqlite journal: the per-document replay', () => {
  it('agrees with journal.ts replaying every fact, for any sequence (unsent restoring what was known), before and after a reopen', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...KINDS), fc.constantFrom('a', 'b', 'c')), { maxLength: 25 }),
        async (steps) => {
          const path = journalPath();
          const facts = steps.map(([kind, sha], n) => factOf(kind, sha, n));
          const expected = replayer();
          for (const f of facts) expected.apply(f);
          const a = await open(path);
          await a.claim(['a', 'b', 'c'].map(key), 3);
          for (const f of facts) await a.append(f);
          // A claim reads the same state as the replay.
          await a.release(['a', 'b', 'c'].map(key));
          const claims = await a.claim(['a', 'b', 'c'].map(key), 3);
          for (const c of claims) expect(c.known).toEqual(expected.known.get(c.key));
          await a.close();
          const b = await open(path, true);
          expect(new Map((await b.replay()).known)).toEqual(expected.known);
          expect((await b.history()).facts.map((f) => f.fact)).toEqual(facts);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe('sqlite journal: importing an older journal', () => {
  it('takes its facts once: the same file again adds nothing; facts appended to it since are taken', async () => {
    const path = journalPath();
    const legacy: JournalFact[] = [
      { fact: 'sending', ...common('d1'), route: 'inline' },
      {
        fact: 'completed',
        ...common('d1', '2026-01-01T00:00:01.000Z'),
        route: 'inline',
        document_id: 'doc_1',
        page_count: 2,
        results: { total: 1 },
      },
      { fact: 'sending', ...common('d2'), route: 'inline' },
    ];
    const j = await writer(path);
    expect(await j.importFacts(legacy, '/old/.extract-state.jsonl')).toBe(3);
    expect(await j.importFacts(legacy, '/old/.extract-state.jsonl')).toBe(0);
    const grown: JournalFact[] = [
      ...legacy,
      { fact: 'submitted', ...common('d2', '2026-01-01T00:00:02.000Z'), route: 'inline', document_id: 'doc_2' },
    ];
    expect(await j.importFacts(grown, '/old/.extract-state.jsonl')).toBe(1);
    expect(await j.importFacts(grown, '/old/.extract-state.jsonl')).toBe(0);
    // Another file is another source.
    expect(await j.importFacts(legacy.slice(0, 1), '/other/.extract-state.jsonl')).toBe(1);
    const { known } = await j.replay();
    expect(known.get(key('d1'))).toMatchObject({ fact: 'completed', document_id: 'doc_1', results: { total: 1 } });
    expect(known.get(key('d2'))).toMatchObject({ fact: 'submitted', document_id: 'doc_2' });
    expect((await j.history()).facts).toHaveLength(5);
  });

  it("keeps what an older journal learned of each key's parser (facts about no document)", async () => {
    const j = await writer(journalPath());
    const legacy: JournalFact[] = [
      { fact: 'journal', at: '2026-01-01T00:00:00.000Z', version: 2 },
      { fact: 'parser', at: '2026-01-01T00:00:00.000Z', target: 'key-b', parser: 'key-a' },
      { fact: 'parser', at: '2026-01-01T00:00:01.000Z', target: 'key-c', parser: 'key-c', not: ['key-a'] },
    ];
    expect(await j.importFacts(legacy, '/old/j.jsonl')).toBe(2);
    expect(await j.importFacts(legacy, '/old/j.jsonl')).toBe(0);
    const { parsers } = await j.replay();
    expect(parsers.get('key-b')).toMatchObject({ parser: 'key-a' });
    expect(parsers.get('key-c')).toMatchObject({ parser: 'key-c', not: ['key-a'] });
  });

  it('an older fact imported after a newer outcome does not hide it; facts before a legacy reset are not taken', async () => {
    const path = journalPath();
    const j = await writer(path);
    await j.claim([key('d1')], 1);
    await j.append({
      fact: 'completed',
      ...common('d1', '2026-03-01T00:00:00.000Z'),
      route: 'inline',
      document_id: 'doc_new',
      page_count: 1,
      results: {},
    });
    const legacy: JournalFact[] = [
      { fact: 'sending', ...common('d2', '2025-01-01T00:00:00.000Z'), route: 'inline' },
      { fact: 'reset', at: '2025-06-01T00:00:00.000Z' },
      { fact: 'sending', ...common('d1', '2026-01-01T00:00:00.000Z'), route: 'inline' },
    ];
    expect(await j.importFacts(legacy, '/old/j.jsonl')).toBe(1);
    const { known } = await j.replay();
    expect(known.get(key('d1'))).toMatchObject({ fact: 'completed', document_id: 'doc_new' });
    expect(known.has(key('d2'))).toBe(false);
  });
});

describe('sqlite journal: files it makes and files it refuses', () => {
  it('is made private (0600), and its folder must exist: a clear error otherwise', async () => {
    const path = journalPath();
    await open(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const missing = join(tempDir(), 'no', 'such', 'j.sqlite');
    await expect(open(missing)).rejects.toThrow(/journal's folder .* does not exist: create it/);
  });

  it('a SQLite database of something else, or a file that is no database, is refused with what to do, and left as it was', async () => {
    const dir = tempDir();
    const other = join(dir, 'app.db');
    const db = new DatabaseSync(other);
    db.exec('CREATE TABLE users (id INTEGER)');
    db.close();
    const refused = await open(other).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ExtractError);
    expect(String(refused)).toMatch(/app\.db is a SQLite database but not an extract journal .*: name another file/);
    const after = new DatabaseSync(other);
    expect(after.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).all()).toEqual([{ name: 'users' }]);
    after.close();

    const text = join(dir, 'notes.db');
    writeFileSync(text, 'these are my notes, not a database, and long enough to have a header\n'.repeat(20));
    await expect(open(text)).rejects.toThrow(/notes\.db is not an extract journal \(not a SQLite database\)/);
    await expect(open(text, true)).rejects.toThrow(/notes\.db is not an extract journal/);
  });

  it('a journal named by a folder is a clear state error, not a stack trace', async () => {
    const dir = tempDir();
    const err = await open(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ExtractError);
    expect(String(err)).toContain(`the journal ${dir}: could not open the journal`);
    expect(String(err)).toMatch(/name another journal with --state/);
  });

  // Root writes into any folder: the refusal cannot happen as root (CI containers), only as a user.
  it.skipIf(process.getuid?.() === 0)('a journal in a folder it may not write is a clear state error', async () => {
    const dir = tempDir();
    chmodSync(dir, 0o500);
    onTestFinished(() => chmodSync(dir, 0o700));
    await expect(open(join(dir, 'j.sqlite'))).rejects.toThrow(/journal .*j\.sqlite.*: .*writable/);
  });

  it('a full disk is a clear state error (a real SQLITE_FULL: the database capped at its size)', () => {
    const path = journalPath();
    const db = new DatabaseSync(path);
    db.exec('CREATE TABLE t (x TEXT)');
    const pages = Number(db.prepare('PRAGMA page_count').get()?.page_count);
    db.exec(`PRAGMA max_page_count = ${pages}`);
    let caught: unknown;
    try {
      db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(100_000));
    } catch (err) {
      caught = err;
    }
    db.close();
    const refusal = journalRefusal(path, 'record a fact', caught);
    expect(refusal.code).toBe('state');
    expect(refusal.message).toBe(
      `the journal ${path}: could not record a fact, the disk is full. Free some space, then rerun the same command: what the journal holds is kept, and documents already submitted are collected, not paid again`,
    );
  });

  // Mounting a tmpfs needs root (CI containers run as root); the variant above always runs.
  it.skipIf(process.getuid?.() !== 0)(
    'a journal on a full tmpfs: the append that does not fit is refused as a full disk; every fact acknowledged before is kept',
    async () => {
      const dir = tempDir();
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]);
      if (mounted.status !== 0) {
        console.log(`skipped: mount -t tmpfs failed (${String(mounted.stderr).trim()}); the SQLITE_FULL variant ran`);
        return;
      }
      onTestFinished(() => {
        spawnSync('umount', ['-l', dir]);
      });
      const path = join(dir, 'journal.sqlite');
      let refused: unknown;
      const runtime = tempDir();
      const j = await openState(
        { kind: 'sqlite', path },
        {
          readOnly: false,
          leaseMs: 30_000,
          log,
          env: { XDG_RUNTIME_DIR: runtime },
          onWriteFailed: (err) => (refused = err),
        },
      );
      const acknowledged: string[] = [];
      for (let n = 0; n < 200 && refused === undefined; n++) {
        const sha = `d${n}`;
        // A fact the journal refuses is kept by the run (rescue.ts), not thrown: the refusal is said once.
        await j.append({
          fact: 'completed',
          ...common(sha),
          route: 'inline',
          document_id: `doc_${n}`,
          page_count: 1,
          results: { text: 'x'.repeat(4_000) },
        });
        if (refused === undefined) acknowledged.push(sha);
      }
      expect(refused).toBeInstanceOf(ExtractError);
      expect(String(refused)).toMatch(/could not be written \(the disk is full\): stopped sending/);
      // A request whose `sending` fact cannot be recorded is not sent.
      await expect(j.append({ fact: 'sending', ...common('next'), route: 'inline' })).rejects.toBe(refused);
      expect(acknowledged.length).toBeGreaterThan(0);
      await j.close();
      const again = await open(path, true);
      const { known } = await again.replay();
      for (const sha of acknowledged) expect(known.get(key(sha))?.fact).toBe('completed');
    },
  );

  it('one journal, whatever path names it: two workers through a symlink share its claims', async () => {
    const path = journalPath();
    const link = join(tempDir(), 'link.sqlite');
    symlinkSync(path, link);
    const a = await open(path);
    const b = await open(link);
    expect(await a.claim([key('d1'), key('d2')], 2)).toHaveLength(2);
    expect(await b.claim([key('d1'), key('d2'), key('d3')], 3)).toMatchObject([{ key: key('d3') }]);
  });
});

describe('sqlite journal: a holder that is gone', () => {
  const on = (pid: number, isAlive: (pid: number) => boolean) => ({ pid, host: 'h1', isAlive, now: Date.now });
  const openAs = async (path: string, lock: ReturnType<typeof on>) => {
    const s = await openState({ kind: 'sqlite', path }, { readOnly: false, leaseMs: 60_000, log, lock });
    onTestFinished(() => s.close());
    return s;
  };

  it('a dead process of this host holds nothing: its documents are taken over at once, not after its lease', async () => {
    const path = journalPath();
    const killed = await openAs(
      path,
      on(4242, () => true),
    );
    expect(await killed.claim([key('d1'), key('d2')], 2)).toHaveLength(2);
    // Its process alive: the lease stands.
    const waiting = await openAs(
      path,
      on(7, () => true),
    );
    expect(await waiting.claim([key('d1'), key('d2')], 2)).toEqual([]);
    // Its process gone (a SIGKILL, a reboot): taken at once, named as taken over.
    const next = await openAs(
      path,
      on(8, (pid) => pid !== 4242),
    );
    const taken = await next.claim([key('d1'), key('d2')], 2);
    expect(taken.map((c) => [c.key, c.takenFrom])).toEqual([
      [key('d1'), killed.worker],
      [key('d2'), killed.worker],
    ]);
    expect((await next.history()).workers.find((w) => w.id === killed.worker)?.alive).toBe(false);
  });

  it("another host's worker is never judged by a local pid: its lease decides", async () => {
    const path = journalPath();
    const remote = await openAs(path, { ...on(4242, () => true), host: 'h2' });
    expect(await remote.claim([key('d1')], 1)).toHaveLength(1);
    const local = await openAs(
      path,
      on(8, () => false),
    );
    expect(await local.claim([key('d1')], 1)).toEqual([]);
  });
});

describe('sqlite journal: group commit', () => {
  /** Frames in the write-ahead log (page size 4096 + a 24-byte header each): each commit adds one per page it changed. */
  function walFrames(path: string): number {
    return Math.floor(statSync(`${path}-wal`).size / (4096 + 24));
  }

  it('facts appended in one turn are one transaction: the log grows by one commit, not one per fact', async () => {
    const path = journalPath();
    const s = await open(path);
    await s.replay();
    // A reader's snapshot keeps the log from being restarted after the journal's checkpoints: it only grows.
    const reader = new DatabaseSync(path, { readOnly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM extract_facts').get();
    await s.append({ fact: 'submitted', ...common('warm'), route: 'upload', document_id: 'doc_warm' });
    const before = walFrames(path);
    const shas = Array.from({ length: 100 }, (_, i) => `g${i}`);
    await Promise.all(
      shas.map((sha, i) => s.append({ fact: 'submitted', ...common(sha), route: 'upload', document_id: `doc_${i}` })),
    );
    const grew = walFrames(path) - before;
    reader.exec('COMMIT');
    reader.close();
    // One commit of 100 rows touches a handful of pages; 100 commits wrote 200 frames or more.
    expect(grew).toBeGreaterThan(0);
    expect(grew).toBeLessThan(40);
    const again = await open(path, true);
    const known = (await again.replay()).known;
    for (const sha of shas) expect(known.get(key(sha))?.fact).toBe('submitted');
  });

  it('a sending whose claim is lost is refused alone; the rest of its group is written', async () => {
    const path = journalPath();
    const s = await open(path);
    await s.replay();
    const held = await s.claim([key('mine')], 1);
    expect(held).toHaveLength(1);
    const outcomes = await Promise.allSettled([
      s.append({ fact: 'sending', ...common('mine'), route: 'inline' }),
      s.append({ fact: 'sending', ...common('never-claimed'), route: 'inline' }),
      s.append({ fact: 'submitted', ...common('other'), route: 'upload', document_id: 'doc_o' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/claim/i);
    expect(s.lost(key('never-claimed'))).toBe(true);
    const bodies = new DatabaseSync(path, { readOnly: true })
      .prepare('SELECT body FROM extract_facts WHERE key IS NOT NULL')
      .all()
      .map((r) => JSON.parse(String(r.body)).sha256);
    expect(bodies).toEqual(['mine', 'other']);
  });
});

describe('sqlite journal: claims read by key', () => {
  it('release and holders find their documents by key, not through the worker index (a run holds every document it has not finished)', async () => {
    const path = journalPath();
    await open(path);
    const db = new DatabaseSync(path, { readOnly: true });
    onTestFinished(() => db.close());
    for (const [name, sql] of Object.entries(CLAIMS_BY_KEY)) {
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all()
        .map((row) => String(row.detail))
        .join('\n');
      expect(plan, name).toMatch(/SEARCH extract_claims USING INDEX sqlite_autoindex_extract_claims_1 \(key=\?\)/);
      expect(plan, name).not.toContain('extract_claims_worker');
    }
  });
});
