import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { errnoCode, isDiskFull, isSqliteBusy, SQLITE, sqliteCode } from '../src/errno.ts';
import { transaction } from '../src/sqlite.ts';
import { tempDir } from './helpers/cli.ts';

/** A real database in a fresh folder, with one table. */
function database(): { db: DatabaseSync; path: string } {
  const path = join(tempDir('extract-sqlite-'), 'x.db');
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER NOT NULL)');
  return { db, path };
}

const synchronous = (db: DatabaseSync) => Number(db.prepare('PRAGMA synchronous').get()?.synchronous);
const count = (db: DatabaseSync) => Number(db.prepare('SELECT count(*) AS n FROM t').get()?.n);

describe('sqlite: one transaction helper', () => {
  it('lands every write or none, and gives back what fn returns', () => {
    const { db } = database();
    expect(transaction(db, () => db.prepare('INSERT INTO t VALUES (1), (2)').run().changes)).toBe(2);
    expect(() =>
      transaction(db, () => {
        db.exec('INSERT INTO t VALUES (3)');
        db.exec('INSERT INTO t VALUES (NULL)'); // NOT NULL: the whole transaction goes
      }),
    ).toThrow();
    expect(count(db)).toBe(2);
    expect(db.isTransaction).toBe(false);
  });

  it('a full disk is thrown as SQLITE_FULL, not hidden behind a failed ROLLBACK (SQLite rolled back itself)', () => {
    const { db } = database();
    const pages = Number(db.prepare('PRAGMA page_count').get()?.page_count);
    db.exec(`PRAGMA max_page_count = ${pages}`);
    let caught: unknown;
    try {
      transaction(db, () => db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(100_000)));
    } catch (err) {
      caught = err;
    }
    expect(isDiskFull(caught)).toBe(true);
    expect(db.isTransaction).toBe(false);
  });

  it('relaxed commits with synchronous=NORMAL and restores FULL, even when fn throws', () => {
    const { db } = database();
    db.exec('PRAGMA synchronous = FULL');
    let during = -1;
    transaction(db, () => (during = synchronous(db)), { relaxed: true });
    expect([during, synchronous(db)]).toEqual([1, 2]); // 1 NORMAL, 2 FULL
    expect(() =>
      transaction(
        db,
        () => {
          throw new Error('no');
        },
        { relaxed: true },
      ),
    ).toThrow('no');
    expect(synchronous(db)).toBe(2);
  });
});

describe('errno: SQLite result codes, read from the code, never from the message', () => {
  it('a database another connection holds exclusively is busy', () => {
    const { db, path } = database();
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; COMMIT;');
    const other = new DatabaseSync(path);
    let caught: unknown;
    try {
      other.exec('BEGIN IMMEDIATE; COMMIT;');
    } catch (err) {
      caught = err;
    }
    expect(errnoCode(caught)).toBe('ERR_SQLITE_ERROR');
    expect(sqliteCode(caught)).toBe(SQLITE.BUSY);
    expect(isSqliteBusy(caught)).toBe(true);
    expect(isDiskFull(caught)).toBe(false);
  });

  it('a message that says "locked" is not enough; an extended code reads as its primary one', () => {
    expect(isSqliteBusy(new Error('the file is locked by the user'))).toBe(false);
    const extended = Object.assign(new Error('x'), { code: 'ERR_SQLITE_ERROR', errcode: 261 }); // SQLITE_BUSY_RECOVERY
    expect(sqliteCode(extended)).toBe(SQLITE.BUSY);
  });

  it('a full database (SQLITE_FULL) and ENOSPC or EDQUOT from the file system are a full disk', () => {
    const { db } = database();
    db.exec('PRAGMA max_page_count = 2');
    let caught: unknown;
    try {
      db.prepare('INSERT INTO t VALUES (?)').run(1);
      for (let i = 0; i < 1000; i++) db.exec(`CREATE TABLE f${i} (x)`);
    } catch (err) {
      caught = err;
    }
    expect(sqliteCode(caught)).toBe(SQLITE.FULL);
    expect(isDiskFull(caught)).toBe(true);
    for (const code of ['ENOSPC', 'EDQUOT'])
      expect(isDiskFull(new Error('write', { cause: Object.assign(new Error('x'), { code }) }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe(false);
  });
});
