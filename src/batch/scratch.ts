import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

/**
 * The run's temporary state: one SQLite database in the temp directory, its file unlinked as soon
 * as it is opened (nothing is left behind by a crash; it lives as long as the connection, which
 * SQLite closes when the object is collected), holding what a run would otherwise keep for every
 * document of its batch (its plan, its records) between being made and being read again. A run
 * over 100,000 documents holds SQLite's page cache, not the lines.
 *
 * No rollback journal on disk and no lock files: one connection, one process, nothing to recover.
 * Writes are grouped (a transaction a block), and a block that fails (a full temp directory, an
 * I/O error) rolls back whole: its lines, and every later one, are kept in memory instead.
 */
export class Scratch {
  readonly #db: DatabaseSync;
  #tables = 0;
  /** Tables made and not yet closed: the database closes with the last of them (the records outlive the plan). */
  #open = 0;
  #closed = false;

  private constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** A database in the temp directory, or undefined when none can be made there. */
  static open(dir = tmpdir()): Scratch | undefined {
    let folder: string | undefined;
    try {
      folder = mkdtempSync(join(dir, 'extract-run-'));
      const db = new DatabaseSync(join(folder, 'run.db'));
      // Exclusive and journalled in memory: SQLite keeps the file's descriptor and makes no other file.
      db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF');
      db.exec(`PRAGMA cache_size = -${CACHE_KB}; BEGIN IMMEDIATE; COMMIT`);
      return new Scratch(db);
    } catch {
      return undefined;
    } finally {
      if (folder !== undefined)
        try {
          rmSync(folder, { recursive: true, force: true });
        } catch {
          // An empty folder left in the temp directory: nothing of the run is in it.
        }
    }
  }

  /**
   * A new table of lines by slot; where the database is already closed (every table made so far
   * released), or refuses a table, undefined.
   */
  lines(): LineSpool | undefined {
    if (this.#closed) return undefined;
    const name = `lines_${this.#tables++}`;
    try {
      this.#db.exec(`CREATE TABLE ${name} (slot INTEGER PRIMARY KEY, line TEXT NOT NULL) STRICT`);
    } catch {
      return undefined;
    }
    this.#open++;
    return new LineSpool(this.#db, name, () => {
      if (--this.#open === 0) this.close();
    });
  }

  /** Closes the database now, whatever its tables (a spool opened alone; a run that threw). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }
}

/** Lines of text found again by their slot: a table of the run's Scratch database. */
export class LineSpool {
  readonly #db: DatabaseSync;
  readonly #put: StatementSync;
  readonly #get: StatementSync;
  /** Lines put since the last block was written, by slot. */
  #pending = new Map<number, string>();
  #pendingBytes = 0;
  #closed = false;
  /** Once a write failed: lines kept in memory by slot, never written. */
  #unwritable = false;
  readonly #kept = new Map<number, string>();
  readonly #release: () => void;

  constructor(db: DatabaseSync, table: string, closed: () => void) {
    this.#db = db;
    this.#release = closed;
    this.#put = db.prepare(`INSERT OR REPLACE INTO ${table} (slot, line) VALUES (?, ?)`);
    this.#get = db.prepare(`SELECT line FROM ${table} WHERE slot = ?`);
  }

  /** A spool in a Scratch database of its own, or undefined when none can be made. */
  static open(dir?: string): LineSpool | undefined {
    return Scratch.open(dir)?.lines();
  }

  /** Stores `line` as slot `slot`'s. */
  put(slot: number, line: string): void {
    if (this.#closed) throw new Error(WRITTEN_AFTER_CLOSE);
    if (this.#unwritable) {
      this.#kept.set(slot, line);
      return;
    }
    this.#pending.set(slot, line);
    this.#pendingBytes += line.length;
    if (this.#pendingBytes >= BLOCK) this.#flush();
  }

  /** Slot `slot`'s line; undefined when none was put there. */
  get(slot: number): string | undefined {
    if (this.#closed) throw new Error(READ_AFTER_CLOSE);
    const held = this.#kept.get(slot) ?? this.#pending.get(slot);
    if (held !== undefined) return held;
    const row = this.#get.get(slot) as { line: string } | undefined;
    return row?.line;
  }

  /** Throws `message` once the spool is closed. */
  assertOpen(message = READ_AFTER_CLOSE): void {
    if (this.#closed) throw new Error(message);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending.clear();
    this.#kept.clear();
    this.#release();
  }

  /**
   * Writes the pending lines in one transaction. A temp directory that refuses them (full: a small
   * tmpfs; an I/O error) must not fail a run whose documents are paid for: the block rolls back,
   * and its lines and every later one are kept in memory, as a run that could not open a spool keeps them.
   */
  #flush(): void {
    if (this.#pending.size === 0) return;
    try {
      this.#db.exec('BEGIN');
      for (const [slot, line] of this.#pending) this.#put.run(slot, line);
      this.#db.exec('COMMIT');
    } catch {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      this.#unwritable = true;
      for (const [slot, line] of this.#pending) this.#kept.set(slot, line);
    }
    this.#pending = new Map();
    this.#pendingBytes = 0;
  }
}

export const READ_AFTER_CLOSE = 'records: read after the run released them';
export const WRITTEN_AFTER_CLOSE = 'records: written after the run released them';

/** Lines are written a block of about this many characters at a time. */
const BLOCK = 256 * 1024;
/** SQLite's page cache for the run's database, in KiB: what the run holds of it in memory. */
const CACHE_KB = 2048;
