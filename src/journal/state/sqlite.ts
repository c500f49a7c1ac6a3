import { closeSync, existsSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ExtractError } from '../../errors.ts';
import { takeInEarlier } from '../earlier.ts';
import { transaction } from '../../sqlite.ts';
import { defaultLockDeps } from '../lock.ts';
import { logMigrations, type OpenStateOptions, type StateJournal } from './journal-state.ts';
import { memoryState } from './memory.ts';
import { Guard } from './sqlite-guard.ts';
import { workerName } from './worker.ts';
import { checkIntact, factsIn, fileSize, forgetMarkOfRemoved, readMark } from './sqlite-mark.ts';
import { migrateSqlite, schemaVersion } from './sqlite-schema.ts';
import { OWN_WORKERS, SqliteState } from './sqlite-state.ts';

/**
 * The SQLite backend: PostgreSQL's claim rules on one machine without a server, so that runs
 * on different folders of one service share a journal without blocking each other, and two
 * that meet on a document pay for it once. One file in WAL mode (readers never wait; one
 * writer at a time, across processes); every write is one short BEGIN IMMEDIATE transaction,
 * waited for up to the busy timeout and then retried up to --state-wait.
 *
 * As with PostgreSQL, `sending` is written only while the claim is still this worker's (checked
 * in the same transaction), and every other fact is true whoever writes it. Leases are on the
 * wall clock, which every process on the machine shares. Facts are committed with
 * synchronous=FULL (a fact is on disk before the request it announces is sent); claims,
 * renewals and releases with NORMAL, which a killed process cannot lose (only a power cut,
 * after which no holder is alive anyway).
 *
 * `extract_facts` is the truth; `extract_documents` is its replay, kept in the same transaction
 * by journal.ts's own replay step, so a rerun reads a row per document, not every fact.
 */

/**
 * How long one statement waits for another process's write before the retry loop takes over;
 * never longer than --state-wait allows (the wait blocks the event loop, answers in flight included).
 */
const BUSY_TIMEOUT_MS = 2_000;

function busyTimeout(options: OpenStateOptions): number {
  return Math.min(BUSY_TIMEOUT_MS, options.outageMs ?? BUSY_TIMEOUT_MS);
}

/** The SQLite journal at `path`, the journals of earlier versions in `takeIn` taken in once as it opens. */
export async function openSqliteState(
  path: string,
  options: OpenStateOptions,
  takeIn: readonly string[] = [],
): Promise<StateJournal> {
  if (options.readOnly) return openSqliteReader(path, options);
  const journal = await openSqliteWriter(path, options);
  try {
    await takeInEarlier(journal, takeIn, options.log);
  } catch (err) {
    await journal.close();
    throw err;
  }
  return journal;
}

async function openSqliteReader(path: string, options: OpenStateOptions): Promise<StateJournal> {
  // A dry run or `extract status` before any run: an empty journal, and no file made.
  if (!existsSync(path)) return memoryState(path);
  const guard = new Guard(path, options);
  const db = await guard.run(
    'open the journal',
    () => new DatabaseSync(path, { readOnly: true, timeout: busyTimeout(options) }),
  );
  try {
    if ((await guard.run('read the journal', () => schemaVersion(db, path))) === 0) {
      db.close();
      return memoryState(path);
    }
  } catch (err) {
    db.close();
    throw err;
  }
  return new SqliteState(db, guard, 'dry-run', options, 0);
}

/** The journal a run writes to; what only SQLite does (`importFacts`) stays on its class. */
export async function openSqliteWriter(path: string, options: OpenStateOptions): Promise<SqliteState> {
  const now = options.now ?? Date.now;
  const guard = new Guard(path, options);
  if (!existsSync(dirname(path))) {
    throw new ExtractError(
      'usage',
      `the journal's folder ${dirname(path)} does not exist: create it, or name a journal in an existing folder with --state`,
    );
  }
  forgetMarkOfRemoved(path);
  const mark = readMark(path);
  // Left as found (opening it would write a new header): a journal that knew documents and is now no bytes at all.
  if (fileSize(path) === 0 && fileSize(`${path}-wal`) === 0) checkIntact(path, mark, 'no bytes');
  const db = await guard.run('open the journal', () => {
    // Made here first so that it is private: SQLite gives its -wal and -shm files the database's mode.
    closeSync(openSync(path, 'a', 0o600));
    const opened = new DatabaseSync(path, { timeout: busyTimeout(options) });
    try {
      opened.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL');
    } catch (err) {
      opened.close();
      throw err;
    }
    return opened;
  });
  try {
    // A journal that knew documents and now reads as none (or fewer) stops the run before it pays again.
    if ((await guard.run('read the journal', () => schemaVersion(db, path))) === 0)
      checkIntact(path, mark, 'no tables');
    const applied = await guard.run('create the journal tables', () =>
      transaction(db, () => migrateSqlite(db, path, now())),
    );
    checkIntact(path, mark, factsIn(db));
    logMigrations(options.log, path, applied);
    const self = options.lock ?? defaultLockDeps();
    const worker = workerName(self.host, self.pid);
    await guard.run('register this worker', () =>
      transaction(
        db,
        () =>
          db
            .prepare(
              'INSERT INTO extract_workers (id, host, pid, started_at, seen_at, lease_ms) VALUES (?, ?, ?, ?, ?, ?)',
            )
            .run(worker, self.host, self.pid, now(), now(), Math.round(options.leaseMs)),
        { relaxed: true },
      ),
    );
    OWN_WORKERS.add(worker);
    return new SqliteState(db, guard, worker, options, options.leaseMs);
  } catch (err) {
    db.close();
    throw err;
  }
}

export { CLAIMS_BY_KEY } from './sqlite-state.ts';
