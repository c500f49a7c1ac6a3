import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { DeliveryState, LedgerKind } from '../contract/emulator.ts';
import { ownFolder, privateDatabase } from '../private-files.ts';

/**
 * The emulator's storage: one SQLite database (node:sqlite) for documents, uploads,
 * the ledger and settings, and a blobs folder for the uploaded bytes. With --in-memory
 * the database lives in memory and the blobs in a temporary folder removed on close.
 */
export type Store = {
  db: DatabaseSync;
  /** Folder holding stored objects; every blob path is resolved inside it. */
  blobDir: string;
  /** Folder for uploads in flight; renamed into blobDir when complete. */
  partialDir: string;
  dataDir: string | null;
  close(): void;
};

/** The values of one of the contract's enums as an SQL list: the CHECKs hold what the contract says. */
const sqlList = (values: readonly string[]): string => values.map((v) => `'${v.replaceAll("'", "''")}'`).join(', ');

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS uploads (
  storage_path TEXT PRIMARY KEY,
  parser_id TEXT NOT NULL,
  file_name TEXT NOT NULL,
  file_type TEXT NOT NULL,
  blob TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  size INTEGER,
  sha256 TEXT,
  uploaded_at INTEGER,
  document_id TEXT
);
CREATE TABLE IF NOT EXISTS documents (
  document_id TEXT PRIMARY KEY,
  parser_id TEXT NOT NULL,
  status TEXT NOT NULL,
  file_name TEXT NOT NULL,
  mime_type TEXT NOT NULL,
  source_type TEXT NOT NULL,
  route TEXT NOT NULL,
  blob TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  page_count INTEGER,
  results TEXT,
  error TEXT,
  created_at INTEGER NOT NULL,
  finished_at INTEGER,
  -- Starts of background extraction, restarts included: a document that keeps taking the server down is failed, not re-queued forever.
  attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS documents_status ON documents (status);
CREATE TABLE IF NOT EXISTS ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN (${sqlList(LedgerKind.options)})),
  document_id TEXT,
  file_name TEXT,
  sha256 TEXT,
  pages INTEGER NOT NULL CHECK (pages >= 0 AND pages <= 1000000000000),
  at INTEGER NOT NULL
);
-- The same bound for data directories made before the CHECK existed (a CHECK cannot be added to a table).
CREATE TRIGGER IF NOT EXISTS ledger_pages_in_range BEFORE INSERT ON ledger
  WHEN NEW.pages < 0 OR NEW.pages > 1000000000000
  BEGIN SELECT RAISE(ABORT, 'ledger pages out of range'); END;
-- The webhook outbox: one delivery per (event, integration), stored before its first attempt.
CREATE TABLE IF NOT EXISTS deliveries (
  delivery_id TEXT PRIMARY KEY,
  event_id TEXT NOT NULL,
  document_id TEXT NOT NULL,
  parser_id TEXT NOT NULL,
  integration_id TEXT NOT NULL,
  payload TEXT NOT NULL,
  test INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL CHECK (state IN (${sqlList(DeliveryState.options)})),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS deliveries_once ON deliveries (document_id, integration_id) WHERE test = 0;
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_at);
CREATE TABLE IF NOT EXISTS delivery_attempts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at INTEGER NOT NULL,
  status INTEGER,
  error TEXT,
  latency_ms INTEGER NOT NULL,
  response_excerpt TEXT
);
CREATE INDEX IF NOT EXISTS delivery_attempts_of ON delivery_attempts (delivery_id);
-- A document is reserved at most once and refunded at most once: the ledger itself refuses a double charge.
CREATE UNIQUE INDEX IF NOT EXISTS ledger_once ON ledger (document_id, kind) WHERE document_id IS NOT NULL;
`;

export function openStore(options: { dataDir?: string | undefined; inMemory?: boolean | undefined }): Store {
  const persistent = !options.inMemory && options.dataDir !== undefined;
  const root = persistent ? options.dataDir! : mkdtempSync(join(tmpdir(), 'extract-serve-'));
  // The database holds upload and inbound secrets, blobs/ the documents: the user's alone.
  if (persistent) ownFolder(root, 'pass a --data-dir of your own');
  const blobDir = join(root, 'blobs');
  const partialDir = join(root, 'partial');
  mkdirSync(blobDir, { recursive: true });
  mkdirSync(partialDir, { recursive: true });
  const file = join(root, 'emulator.db');
  if (persistent) privateDatabase(file, 'move it away (serve did not make it), or pass another --data-dir');
  const db = new DatabaseSync(persistent ? file : ':memory:');
  // WAL keeps readers (polling clients) off the writer's back; FULL sync makes an
  // acknowledged reserve survive a kill -9 of the server.
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
  db.exec(SCHEMA);
  migrate(db);
  return {
    db,
    blobDir,
    partialDir,
    dataDir: persistent ? root : null,
    close() {
      db.close();
      if (!persistent) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Columns added after a data directory may have been created: added in place, once. */
function migrate(db: DatabaseSync): void {
  const columns = (db.prepare('PRAGMA table_info(documents)').all() as Array<{ name: string }>).map((c) => c.name);
  if (!columns.includes('attempts')) db.exec('ALTER TABLE documents ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0');
  if (!columns.includes('grounding')) db.exec('ALTER TABLE documents ADD COLUMN grounding TEXT');
  if (!columns.includes('notes')) db.exec('ALTER TABLE documents ADD COLUMN notes TEXT');
}

function getMeta(db: DatabaseSync, key: string): string | undefined {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}

export function setMetaOnce(db: DatabaseSync, key: string, value: string): string {
  db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  return getMeta(db, key)!;
}
