import { DatabaseSync } from 'node:sqlite';
import { transaction } from '../../sqlite.ts';
import type { StateJournal } from './journal-state.ts';
import { Guard } from './sqlite-guard.ts';
import { migrateSqlite } from './sqlite-schema.ts';
import { SqliteState } from './sqlite-state.ts';

/**
 * --no-state, and a dry run or `extract status` before any journal exists: what this run
 * learns, kept in a SQLite database in memory, on the same projection and claims as the
 * SQLite journal (one worker: every claim is granted, nothing is taken over).
 */
export function memoryState(where = 'no journal (--no-state)'): StateJournal {
  const options = { readOnly: false, leaseMs: 0, log: () => {} };
  const db = new DatabaseSync(':memory:');
  transaction(db, () => migrateSqlite(db, where, Date.now()));
  const journal = new SqliteState(db, new Guard(where, options), 'local', options, 0, false);
  // A plain object, as a wrapper (rescue.ts) or a test spreads it: its methods are its own.
  return {
    where,
    shared: false,
    worker: 'local',
    replay: () => journal.replay(),
    view: () => journal.view(),
    append: (fact) => journal.append(fact),
    claim: (keys, max) => journal.claim(keys, max),
    release: (keys) => journal.release(keys),
    lost: (key) => journal.lost(key),
    holders: (keys) => journal.holders(keys),
    history: () => journal.history(),
    close: () => journal.close(),
  };
}
