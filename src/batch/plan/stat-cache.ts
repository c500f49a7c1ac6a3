import { rmSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { crc32 } from 'node:zlib';
import { stampChangedMs, type InputFile } from '../discover.ts';
import type { FileFacts } from '../facts.ts';
import { transaction } from '../../sqlite.ts';

/**
 * The stat cache, like git's index: a file's real path with its size, mtime and ctime (Node's
 * milliseconds, to a quarter of a microsecond), inode and device, mapped to the sha256 and MIME type read from its content.
 * A rerun whose files all match needs to read none of them; a file whose stat changed in any
 * of these is read and hashed again.
 *
 * A table of the journal (extract_stat_cache): in the SQLite journal itself, or beside a JSON
 * Lines journal in a SQLite file of its own (`<journal>.stat-cache`). A cache: whatever cannot be
 * read (an older version's file, a damaged row, a database that refuses) is a miss, and the file
 * is read again. Each row carries a CRC-32 of its fields, so a row changed by hand or by a torn
 * page is not trusted.
 *
 * The one assumption: a file whose content changes gets a new size, mtime or ctime, or a new
 * inode (a tool that writes a new file and renames it over the old one). ctime cannot be set
 * back by `touch -d`, tar or rsync, so restoring an old mtime does not hide a change.
 *
 * Racy entries: a file changed again within its filesystem's timestamp granularity of being
 * hashed keeps the stamp that was recorded. Git (Documentation/technical/racy-git.txt) treats
 * an entry whose mtime is not older than the index file's own mtime as "racily clean" and
 * compares its content. We do not record such an entry at all: a file whose mtime or ctime is
 * within 2 s (FAT's granularity, the coarsest) of the moment we began reading it is hashed
 * again by the next run, so no stamp is trusted that a same-granule change could share.
 */

/** mtime/ctime at least this much older than the read are trusted (ms). */
const RACY_MS = 2_000;
/** Changes written in one transaction: what the cache holds of a first run in memory. */
const BATCH = 500;

const SCHEMA = `CREATE TABLE IF NOT EXISTS extract_stat_cache (
  real_path TEXT PRIMARY KEY, stamp TEXT NOT NULL, sha256 TEXT NOT NULL, mime_type TEXT NOT NULL, crc INTEGER NOT NULL
) WITHOUT ROWID`;

export type StatCache = {
  /** Looks up a window of files at once (the plan's): their get() asks the database nothing more. */
  prefetch(files: readonly InputFile[]): void;
  /** The content's facts when the file's stamp is the one recorded. */
  get(file: InputFile): FileFacts | undefined;
  /** Records facts read from the file; `readStartedMs` is the wall clock when the read began. */
  set(file: InputFile, facts: FileFacts, readStartedMs: number): void;
  /** Writes what was recorded and not yet written. */
  save(): void;
  /** Closes the database; what was recorded since the last write is dropped. */
  close(): void;
};

/** Where a JSON Lines journal's stat cache is (a SQLite journal keeps it in its own tables). */
export function statCachePathFor(journal: string): string {
  return `${journal}.stat-cache`;
}

/**
 * The stat cache in the SQLite database at `path`. `ownFile`: the file is the cache's alone (a
 * JSON Lines journal's), so one that is not a database of this kind (an older version's) is
 * replaced; the journal's own database is never replaced. `readOnly`: looked up, never written
 * (a dry run).
 */
export function openStatCache(path: string, options: { ownFile?: boolean; readOnly?: boolean } = {}): StatCache {
  const { ownFile = true, readOnly = false } = options;
  const db = openTable(path, ownFile, readOnly);
  if (db === undefined) return NO_CACHE;
  let one: StatementSync | undefined;
  let some: StatementSync | undefined;
  // The last window's rows by path (null: looked up, not there).
  let window = new Map<string, Row | null>();
  // Changes not yet written: path -> its new row, or null to forget it.
  let pending = new Map<string, Row | null>();
  // The row of a path: from the window, else asked alone.
  const lookup = (realPath: string): Row | null => {
    const held = window.get(realPath);
    if (held !== undefined) return held;
    one ??= rows(
      db.prepare('SELECT real_path, stamp, sha256, mime_type, crc FROM extract_stat_cache WHERE real_path = ?'),
    );
    return readRow(() => one?.get(realPath));
  };
  let upsert: StatementSync | undefined;
  let forget: StatementSync | undefined;
  const write = (): void => {
    if (pending.size === 0 || readOnly) return;
    const changes = pending;
    pending = new Map();
    upsert ??= db.prepare('INSERT OR REPLACE INTO extract_stat_cache VALUES (?, ?, ?, ?, ?)');
    forget ??= db.prepare('DELETE FROM extract_stat_cache WHERE real_path = ?');
    transaction(
      db,
      () => {
        for (const [realPath, row] of changes)
          if (row === null) forget?.run(realPath);
          else upsert?.run(...row);
      },
      { relaxed: true },
    );
  };
  return {
    prefetch(files) {
      some ??= rows(
        db.prepare(
          'SELECT real_path, stamp, sha256, mime_type, crc FROM extract_stat_cache WHERE real_path IN (SELECT value FROM json_each(?))',
        ),
      );
      const paths = files.map((f) => f.realPath);
      window = new Map(paths.map((p) => [p, null]));
      try {
        for (const row of some.all(JSON.stringify(paths)) as unknown as Row[]) window.set(row[0], row);
      } catch {
        // A database that refuses: each file is looked up alone (and missed).
        window = new Map();
      }
    },
    get(file) {
      const stamp = file.stamp;
      if (!stamp) return undefined;
      const changed = pending.get(file.realPath);
      const row = changed !== undefined ? changed : lookup(file.realPath);
      if (row === null || row[1] !== stamp || row[4] !== crcOf(row[0], row[1], row[2], row[3])) return undefined;
      return { sha256: row[2], mimeType: row[3] };
    },
    set(file, facts, readStartedMs) {
      const stamp = file.stamp;
      if (!stamp) return;
      // Racy: forget any older entry, so that the next run reads the file.
      if (stampChangedMs(stamp) > readStartedMs - RACY_MS) {
        const changed = pending.get(file.realPath);
        if ((changed !== undefined ? changed : lookup(file.realPath)) !== null) pending.set(file.realPath, null);
      } else {
        const { realPath } = file;
        pending.set(realPath, [
          realPath,
          stamp,
          facts.sha256,
          facts.mimeType,
          crcOf(realPath, stamp, facts.sha256, facts.mimeType),
        ]);
      }
      window.delete(file.realPath);
      // Written as the plan goes, so that a first run holds a batch of them, not all; a write
      // refused now (another run writing its cache) costs the next run a read of these files.
      if (pending.size >= BATCH)
        try {
          write();
        } catch {
          // A cache: the next run reads these files again.
        }
    },
    save: write,
    close() {
      pending = new Map();
      window = new Map();
      db.close();
    },
  };
}

/** real_path, stamp, sha256, mime_type, crc. */
type Row = [string, string, string, string, number];

const NO_CACHE: StatCache = {
  prefetch: () => {},
  get: () => undefined,
  set: () => {},
  save: () => {},
  close: () => {},
};

/** The database with its table, or undefined when there is none to use (a dry run before any run; one that refuses). */
function openTable(path: string, ownFile: boolean, readOnly: boolean): DatabaseSync | undefined {
  const open = (): DatabaseSync => {
    const db = new DatabaseSync(path, { readOnly, timeout: BUSY_MS });
    try {
      if (readOnly) db.prepare('SELECT 1 FROM extract_stat_cache LIMIT 1').get();
      else {
        db.exec(SCHEMA);
      }
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  };
  try {
    return open();
  } catch {
    if (!ownFile || readOnly) return undefined;
  }
  // An older version's cache (its own text format) or a damaged one: a cache, made again.
  try {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    return open();
  } catch {
    return undefined;
  }
}

/** Another run writing its cache into the same journal is waited for this long; past it, a miss. */
const BUSY_MS = 5_000;

/** The statement's rows as arrays (no object a row: a rerun reads one a file). */
function rows(statement: StatementSync): StatementSync {
  statement.setReturnArrays(true);
  return statement;
}

function readRow(get: () => unknown): Row | null {
  try {
    return (get() as Row | undefined) ?? null;
  } catch {
    return null;
  }
}

function crcOf(realPath: string, stamp: string, sha256: string, mimeType: string): number {
  return crc32(`${realPath}\0${stamp}\0${sha256}\0${mimeType}`);
}
