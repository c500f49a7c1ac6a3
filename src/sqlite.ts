import type { DatabaseSync } from 'node:sqlite';

/**
 * Runs `fn` in one transaction (BEGIN IMMEDIATE: the write lock is taken at once, so two
 * writers never deadlock on an upgrade): all of its writes land, or none.
 *
 * `relaxed`: commit with synchronous=NORMAL, then restore FULL. In WAL mode such a commit
 * survives a killed process (only a power cut can lose it) and spares the event loop an fsync;
 * for bookkeeping that can be redone, never for what was acknowledged. node:sqlite is
 * synchronous, so nothing else runs on the connection while the setting is lowered.
 */
export function transaction<T>(db: DatabaseSync, fn: () => T, options: { relaxed?: boolean } = {}): T {
  db.exec(options.relaxed ? 'PRAGMA synchronous = NORMAL; BEGIN IMMEDIATE' : 'BEGIN IMMEDIATE');
  try {
    const out = fn();
    db.exec('COMMIT');
    return out;
  } catch (err) {
    // SQLite rolls back on its own after some errors (SQLITE_FULL): a second ROLLBACK would throw
    // "no transaction is active" and hide the error that says what happened.
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  } finally {
    if (options.relaxed) db.exec('PRAGMA synchronous = FULL');
  }
}
