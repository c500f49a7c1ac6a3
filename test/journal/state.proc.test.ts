import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stateKey, type JournalFact } from '../../src/journal/journal.ts';
import {
  ClaimLostError,
  memoryState,
  openState,
  parseStateSpec,
  type StateJournal,
} from '../../src/journal/state/index.ts';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/journal/state/schema.ts';
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from '../../src/journal/state/sqlite-schema.ts';
import { PG_PASSWORD, startPostgres, type PgServer } from '../helpers/postgres.ts';

/**
 * One journal test-suite, four backends: the JSONL file, SQLite, PostgreSQL (a real
 * server, see test/helpers/postgres.ts) and the memory journal of --no-state. What one backend promises, the others must too; what
 * only a shared journal does (claims, leases, take-over, schema versions) is tested on
 * PostgreSQL and SQLite below, through each one's own admin connection.
 */

const common = (sha256: string) => ({ at: '2026-01-01T00:00:00.000Z', sha256, target: 't1', file: `${sha256}.pdf` });
const key = (sha256: string) => stateKey(sha256, 't1');
const log = () => {};

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(() => server?.stop());

const opened: StateJournal[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close().catch(() => undefined);
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempFile(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'state-'));
  dirs.push(dir);
  return join(dir, name);
}

type Backend = { name: string; location(): Promise<string> };

/** A shared journal, and what a test does to it behind the workers' backs. */
type SharedBackend = Backend & {
  migrations: number[];
  version: number;
  /** Pushes `worker`'s leases into the past, as if it had stopped renewing (a SIGKILLed worker). */
  expire(where: string, worker: string): Promise<void>;
  versions(where: string): Promise<number[]>;
  addVersion(where: string, version: number): Promise<void>;
  /** Whether the journal's tables exist. */
  made(where: string): Promise<boolean>;
};

async function withPg<T>(url: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

function withSqlite<T>(path: string, work: (admin: DatabaseSync) => T): T {
  const admin = new DatabaseSync(path, { timeout: 5_000 });
  try {
    return work(admin);
  } finally {
    admin.close();
  }
}

const POSTGRES: SharedBackend = {
  name: 'postgres',
  location: () => server.database(),
  migrations: MIGRATIONS.map((m) => m.version),
  version: SCHEMA_VERSION,
  expire: (url, worker) =>
    withPg(url, async (admin) => {
      await admin.query(`UPDATE extract_claims SET expires = now() - interval '1 second' WHERE worker = $1`, [worker]);
      // A server up for less than one lease gives holders that lease to renew (a restart): wait it out,
      // as a server started just for this test would otherwise refuse the take-over.
      await admin.query(`SELECT pg_sleep(GREATEST(0, 1.1 - extract(epoch FROM now() - pg_postmaster_start_time())))`);
    }),
  versions: (url) =>
    withPg(url, async (admin) =>
      (await admin.query('SELECT version FROM extract_schema ORDER BY version')).rows.map((r) => Number(r.version)),
    ),
  addVersion: (url, version) =>
    withPg(url, async (admin) => {
      await admin.query('INSERT INTO extract_schema (version) VALUES ($1)', [version]);
    }),
  made: (url) =>
    withPg(
      url,
      async (admin) => (await admin.query(`SELECT to_regclass('extract_facts') IS NOT NULL AS made`)).rows[0].made,
    ),
};

const SQLITE: SharedBackend = {
  name: 'sqlite',
  location: () => tempFile('journal.sqlite'),
  migrations: SQLITE_MIGRATIONS.map((m) => m.version),
  version: SQLITE_SCHEMA_VERSION,
  expire: async (path, worker) =>
    withSqlite(path, (admin) => {
      admin.prepare('UPDATE extract_claims SET expires = ? WHERE worker = ?').run(Date.now() - 1_000, worker);
    }),
  versions: async (path) =>
    withSqlite(path, (admin) =>
      admin
        .prepare('SELECT version FROM extract_schema ORDER BY version')
        .all()
        .map((r) => Number(r.version)),
    ),
  addVersion: async (path, version) =>
    withSqlite(path, (admin) => {
      admin.prepare('INSERT INTO extract_schema (version, applied_at) VALUES (?, ?)').run(version, Date.now());
    }),
  // A dry run on a journal no worker used yet must not even create the file.
  made: async (path) => existsSync(path),
};

/**
 * --no-state's journal (SQLite in memory) lives as long as its process: opening its name again
 * is the same journal, so what the others promise across a reopen it promises within a run.
 */
const memories = new Map<string, StateJournal>();
afterEach(async () => {
  for (const j of memories.values()) await j.close();
  memories.clear();
});
const MEMORY: Backend = { name: 'memory', location: async () => `memory:${memories.size}:${Math.random()}` };

const BACKENDS: Backend[] = [{ name: 'file', location: () => tempFile('state.jsonl') }, SQLITE, POSTGRES, MEMORY];

async function open(where: string, leaseMs = 30_000, readOnly = false): Promise<StateJournal> {
  if (where.startsWith('memory:')) {
    const journal = memories.get(where) ?? memoryState(where);
    memories.set(where, journal);
    return { ...journal, close: async () => {} };
  }
  const s = await openState(parseStateSpec(where, '/'), { readOnly, leaseMs, log });
  opened.push(s);
  return s;
}

describe.each(BACKENDS)('journal ($name)', (backend) => {
  it('every kind of fact survives a reopen; the latest fact of a document wins', async () => {
    const where = await backend.location();
    const a = await open(where);
    const facts: JournalFact[] = [
      {
        fact: 'sending',
        ...common('d1'),
        route: 'upload',
        request: { idempotency_key: 'k1', file_name: 'd1.pdf', file_type: 'application/pdf', storage_path: 'p/1' },
      },
      { fact: 'submitted', ...common('d1'), route: 'upload', document_id: 'doc_1' },
      {
        fact: 'completed',
        ...common('d1'),
        route: 'upload',
        document_id: 'doc_1',
        page_count: 2,
        results: { total: null, name: 'x' },
      },
      { fact: 'sending', ...common('d2'), route: 'inline' },
      {
        fact: 'failed',
        ...common('d2'),
        route: 'inline',
        document_id: null,
        reason: 'no answer',
        retryable: true,
        request: { idempotency_key: 'k2', file_name: 'd2.pdf', file_type: 'application/pdf' },
      },
      { fact: 'sending', ...common('d3'), route: 'inline' },
      { fact: 'unsent', ...common('d3'), route: 'inline' },
      { fact: 'sending', ...common('d4'), route: 'inline' },
    ];
    await a.claim(['d1', 'd2', 'd3', 'd4'].map(key), 4);
    for (const f of facts) await a.append(f);
    await a.close();
    opened.length = 0;

    const b = await open(where);
    const { known } = await b.replay();
    expect(known.get(key('d1'))).toEqual(facts[2]); // null stays null, never 0
    expect(known.get(key('d2'))).toEqual(facts[4]);
    expect(known.has(key('d3'))).toBe(false); // unsent forgets the send
    expect(known.get(key('d4'))?.fact).toBe('sending'); // an uncertain send stays visible
    expect(known.size).toBe(3);
    const history = await b.history();
    const documentFacts = history.facts.filter((f) => f.fact.fact !== 'journal');
    expect(documentFacts.map((f) => f.fact.fact)).toEqual(facts.map((f) => f.fact));
  });

  it('a claim answers with what the journal knows now, including facts written after the replay', async () => {
    const where = await backend.location();
    const a = await open(where);
    await a.replay();
    await a.claim([key('d1')], 1);
    await a.append({ fact: 'submitted', ...common('d1'), route: 'upload', document_id: 'doc_1' });
    await a.release([key('d1')]);
    const [claim, ...rest] = await a.claim([key('d1'), key('d2')], 2);
    expect(rest.map((c) => c.key)).toEqual([key('d2')]);
    expect(claim).toMatchObject({
      key: key('d1'),
      known: { fact: 'submitted', document_id: 'doc_1' },
      concurrent: false,
      takenFrom: null,
    });
    expect(rest[0]?.known).toBeUndefined();
  });

  it('facts replay in the order written, past the tenth (not in the order of their ids as text)', async () => {
    const where = await backend.location();
    const a = await open(where);
    await a.claim([key('d1')], 1);
    for (let i = 0; i < 11; i++)
      await a.append({
        fact: 'sending',
        ...common('d1'),
        route: 'inline',
        request: { idempotency_key: `k${i}`, file_name: 'd1.pdf', file_type: 'application/pdf' },
      });
    await a.append({
      fact: 'completed',
      ...common('d1'),
      route: 'inline',
      document_id: 'doc_1',
      page_count: 1,
      results: {},
    });
    await a.release([key('d1')]);
    expect((await a.claim([key('d1')], 1))[0]?.known?.fact).toBe('completed');
    const b = await open(where, 30_000, true);
    expect((await b.replay()).known.get(key('d1'))?.fact).toBe('completed');
  });

  it('a claim takes at most the number asked for', async () => {
    const a = await open(await backend.location());
    const claims = await a.claim(['a', 'b', 'c', 'd', 'e'].map(key), 2);
    expect(claims).toHaveLength(2);
  });

  it('an empty journal replays as empty; a dry run (read-only) opens it without writing', async () => {
    const where = await backend.location();
    const ro = await open(where, 30_000, true);
    expect((await ro.replay()).known.size).toBe(0);
  });
});

describe.each([SQLITE, POSTGRES])('journal ($name): many workers', (backend) => {
  it('a document held by a live worker is not claimed by another; released, it is', async () => {
    const url = await backend.location();
    const a = await open(url);
    const b = await open(url);
    expect((await a.claim([key('d1'), key('d2')], 2)).map((c) => c.key).sort()).toEqual([key('d1'), key('d2')]);
    expect(await b.claim([key('d1'), key('d2'), key('d3')], 3)).toMatchObject([{ key: key('d3') }]);
    await a.append({
      fact: 'completed',
      ...common('d1'),
      route: 'inline',
      document_id: 'doc_1',
      page_count: 1,
      results: {},
    });
    await a.release([key('d1')]);
    const [claim] = await b.claim([key('d1'), key('d2')], 2);
    // b's replay was before a's fact: a's outcome in this run is marked concurrent.
    expect(claim).toMatchObject({ key: key('d1'), known: { fact: 'completed' }, concurrent: true, takenFrom: null });
    expect((await b.holders([key('d1'), key('d2')])).get(key('d2'))).toBe(a.worker);
  });

  it('only the holder may write sending; a worker whose lease ran out is refused and its document taken over', async () => {
    const url = await backend.location();
    // a's lease is long so that its renewal (every third of the lease) cannot undo the push below
    // before b claims: with 1 s it renewed within 333 ms and b found the document still held.
    const a = await open(url, 60_000);
    const b = await open(url, 1_000);
    await a.claim([key('d1')], 1);
    await a.append({ fact: 'submitted', ...common('d1'), route: 'upload', document_id: 'doc_1' });
    // a stops renewing (as a SIGKILLed worker would): simulate by pushing its lease into the past.
    await backend.expire(url, a.worker);
    const [claim] = await b.claim([key('d1')], 1);
    expect(claim).toMatchObject({ known: { fact: 'submitted', document_id: 'doc_1' }, takenFrom: a.worker });
    await expect(a.append({ fact: 'sending', ...common('d1'), route: 'upload' })).rejects.toBeInstanceOf(
      ClaimLostError,
    );
    expect(a.lost(key('d1'))).toBe(true);
    // Facts other than sending are true whoever writes them: always recorded.
    await a.append({
      fact: 'completed',
      ...common('d1'),
      route: 'upload',
      document_id: 'doc_1',
      page_count: 1,
      results: {},
    });
    expect((await b.history()).facts.map((f) => f.fact.fact)).toEqual(['submitted', 'completed']);
  });

  it('a holder renews its lease: its documents stay its own beyond the first lease', async () => {
    const url = await backend.location();
    // Renewed every third of a lease on the real clock: a lease of 2 s lets a's timer run over
    // 1.3 s late (a loaded machine) before b could take its document.
    const a = await open(url, 2_000);
    const b = await open(url, 2_000);
    await a.claim([key('d1')], 1);
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await b.claim([key('d1')], 1)).toEqual([]);
  });

  it('the schema is created on first use, recorded by version, and a newer schema is refused', async () => {
    const url = await backend.location();
    await open(url);
    await open(url); // a second worker finds it made
    expect(await backend.versions(url)).toEqual(backend.migrations);
    await backend.addVersion(url, backend.version + 1);
    await expect(open(url)).rejects.toThrow(
      new RegExp(`schema version ${backend.version + 1}, newer than this extract knows`),
    );
  });

  it('a dry run or extract status on a database no worker used yet reads an empty journal and creates nothing', async () => {
    const url = await backend.location();
    const ro = await open(url, 30_000, true);
    expect((await ro.replay()).known.size).toBe(0);
    expect((await ro.history()).facts).toEqual([]);
    expect(await backend.made(url)).toBe(false);
  });
});

describe('journal (postgres): connection', () => {
  it('a wrong password fails at once with a clear message that does not show it', async () => {
    const url = (await server.database()).replace(PG_PASSWORD, 'WRONG_pw_55aa');
    const err = await open(url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toMatch(
      /could not create the journal tables in the state database postgres:\/\/\*\*\*@127\.0\.0\.1/,
    );
    expect(message).not.toContain('WRONG_pw_55aa');
  });
});
