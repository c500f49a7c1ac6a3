import type { DatabaseSync } from 'node:sqlite';
import { ExtractError } from '../../errors.ts';

/**
 * The SQLite journal's tables (state/sqlite.ts), created on first use. As for PostgreSQL
 * (state/schema.ts), migrations only go forward, each applied once in the transaction that
 * records its version, and a file made by a newer `extract` is refused rather than misread.
 * The caller holds the write lock (BEGIN IMMEDIATE), so two runs starting at once migrate once.
 */

export const SQLITE_MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      -- Every fact, in the order written: the truth. key is the document (target:sha256); body is the fact as the JSONL journal writes it.
      CREATE TABLE extract_facts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT,
        fact TEXT NOT NULL,
        body TEXT NOT NULL,
        worker TEXT,
        at INTEGER NOT NULL
      );
      CREATE INDEX extract_facts_key ON extract_facts (key, id);
      -- The replay of the facts, kept per document in the transaction that adds each fact, so a run
      -- reads one row per document instead of every fact. state is the latest fact without its
      -- results (NULL: nothing known, after an unsent first send); results their JSON text; before
      -- what an unsent fact restores. last_fact and last_worker tell a claim whether another worker
      -- wrote the latest fact while this run went on.
      CREATE TABLE extract_documents (
        key TEXT PRIMARY KEY,
        state TEXT,
        results TEXT,
        before TEXT,
        last_fact INTEGER NOT NULL,
        last_worker TEXT
      );
      -- Who works on a document now. A claim is valid until expires (ms since the epoch); worker NULL means free.
      CREATE TABLE extract_claims (
        key TEXT PRIMARY KEY,
        worker TEXT,
        expires INTEGER NOT NULL,
        claimed_at INTEGER
      );
      CREATE INDEX extract_claims_worker ON extract_claims (worker);
      -- The workers that used this journal, for extract status.
      CREATE TABLE extract_workers (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        seen_at INTEGER NOT NULL,
        finished_at INTEGER,
        lease_ms INTEGER NOT NULL
      );
      -- Older journals imported once: a file is append-only, so facts past the count already taken are new.
      CREATE TABLE extract_imports (
        source TEXT PRIMARY KEY,
        facts INTEGER NOT NULL,
        at INTEGER NOT NULL
      );
    `,
  },
];

export const SQLITE_SCHEMA_VERSION = Math.max(...SQLITE_MIGRATIONS.map((m) => m.version));

const SCHEMA_TABLE =
  'CREATE TABLE IF NOT EXISTS extract_schema (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)';

/** The version the file's journal has (0: none yet); refuses a database that is not a journal, or a newer one. */
export function schemaVersion(db: DatabaseSync, where: string): number {
  const tables = db
    .prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
    .all()
    .map((row) => String(row.name));
  if (tables.length === 0) return 0;
  if (!tables.includes('extract_schema')) {
    throw new ExtractError(
      'usage',
      `${where} is a SQLite database but not an extract journal (it has tables of its own): name another file with --state`,
    );
  }
  const version = Number(db.prepare('SELECT coalesce(max(version), 0) AS v FROM extract_schema').get()?.v ?? 0);
  if (version > SQLITE_SCHEMA_VERSION) {
    throw new ExtractError(
      'usage',
      `the journal ${where} has schema version ${version}, newer than this extract knows (${SQLITE_SCHEMA_VERSION}): upgrade extract on this machine to use it`,
    );
  }
  return version;
}

/** Runs inside a write transaction the caller opened. Returns the versions applied. */
export function migrateSqlite(db: DatabaseSync, where: string, now: number): number[] {
  const current = schemaVersion(db, where);
  db.exec(SCHEMA_TABLE);
  const applied: number[] = [];
  for (const m of SQLITE_MIGRATIONS) {
    if (m.version <= current) continue;
    db.exec(m.sql);
    db.prepare('INSERT INTO extract_schema (version, applied_at) VALUES (?, ?)').run(m.version, now);
    applied.push(m.version);
  }
  return applied;
}
