import { join } from 'node:path';
import { DatabaseSync, type SQLOutputValue } from 'node:sqlite';
import { isSqliteBusy } from '../errno.ts';
import { ownFolder, privateDatabase } from '../private-files.ts';
import { ExtractError } from '../errors.ts';
import { transaction } from '../sqlite.ts';
import { DocumentRecord } from '../outputs/record-schema.ts';

/** What became of an event: its document seen for the first time, a duplicate, or not a valid event. */
const OUTCOMES = ['new', 'duplicate', 'invalid'] as const;
type Outcome = (typeof OUTCOMES)[number];

/**
 * The receiver's durable state, one SQLite database in the data directory:
 * - inbox: every acknowledged event, raw, appended before the 200 is sent;
 * - seen: one row per document_id ever processed, with its record (deduplication across
 *   restarts, and the source of whole-file outputs and the review list);
 * - rejected: bodies answered 400 (not a JSON object), kept for inspection.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  received_at TEXT NOT NULL,
  method TEXT NOT NULL,
  document_id TEXT NOT NULL,
  body BLOB NOT NULL,
  processed_at TEXT,
  outcome TEXT CHECK (outcome IN (${OUTCOMES.map((o) => `'${o}'`).join(', ')}))
);
CREATE INDEX IF NOT EXISTS inbox_unprocessed ON inbox (seq) WHERE processed_at IS NULL;
CREATE TABLE IF NOT EXISTS seen (
  document_id TEXT PRIMARY KEY,
  inbox_seq INTEGER NOT NULL UNIQUE,
  file_name TEXT NOT NULL,
  record TEXT NOT NULL,
  null_fields TEXT NOT NULL,
  first_seen_at TEXT NOT NULL,
  written INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS seen_unwritten ON seen (inbox_seq) WHERE written = 0;
CREATE TABLE IF NOT EXISTS rejected (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  received_at TEXT NOT NULL,
  method TEXT NOT NULL,
  content_type TEXT,
  reason TEXT NOT NULL,
  body BLOB NOT NULL
);
`;

export const INBOX_FILE = 'inbox.db';

export type InboxRow = { seq: number; method: string; body: Uint8Array };
export type SeenRow = { document_id: string; inbox_seq: number; record: DocumentRecord; null_fields: string[] };

export type InboxEvent = { receivedAt: Date; method: string; documentId: string; body: Uint8Array };

/** Opens the database of a data directory: WAL, synchronous=FULL, one listener at a time. */
function openDatabase(dataDir: string): DatabaseSync {
  const path = join(dataDir, INBOX_FILE);
  // It holds every event's raw body: private to the user, never a file someone else put there.
  ownFolder(dataDir, 'pass a --data-dir of your own');
  privateDatabase(path, 'move it away (it is not an inbox listen made), or pass another --data-dir');
  const db = new DatabaseSync(path);
  try {
    // WAL + synchronous=FULL: a committed append is on disk before the 200 leaves, so a
    // kill -9 the next instant loses nothing. EXCLUSIVE locking keeps a second listener off
    // the same inbox (two workers would race on the outputs).
    db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
    db.exec('BEGIN IMMEDIATE; COMMIT;');
    db.exec(SCHEMA);
    return db;
  } catch (err) {
    db.close();
    const busy = isSqliteBusy(err);
    throw new ExtractError(
      busy ? 'locked' : 'usage',
      busy
        ? `the inbox in ${dataDir} is in use by another extract listen: stop it, or pass another --data-dir`
        : `cannot open the inbox ${path} (${err instanceof Error ? err.message : String(err)}): check the --data-dir permissions`,
      { cause: err },
    );
  }
}

/** Every statement of the inbox, prepared once when it opens. */
function statements(db: DatabaseSync) {
  return {
    insertInbox: db.prepare('INSERT INTO inbox (received_at, method, document_id, body) VALUES (?, ?, ?, ?)'),
    dropBody: db.prepare("UPDATE inbox SET body = x'' WHERE seq = ? AND processed_at IS NOT NULL"),
    insertRejected: db.prepare(
      'INSERT INTO rejected (received_at, method, content_type, reason, body) VALUES (?, ?, ?, ?, ?)',
    ),
    selectUnprocessed: db.prepare('SELECT seq, method, body FROM inbox WHERE processed_at IS NULL ORDER BY seq'),
    claim: db.prepare(
      'INSERT INTO seen (document_id, inbox_seq, file_name, record, null_fields, first_seen_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (document_id) DO NOTHING',
    ),
    markProcessed: db.prepare('UPDATE inbox SET processed_at = ?, outcome = ? WHERE seq = ?'),
    selectUnwritten: db.prepare(
      'SELECT document_id, inbox_seq, record, null_fields FROM seen WHERE written = 0 ORDER BY inbox_seq',
    ),
    markWritten: db.prepare('UPDATE seen SET written = 1 WHERE document_id = ?'),
    selectPage: db.prepare(
      'SELECT document_id, inbox_seq, record, null_fields FROM seen WHERE inbox_seq > ? AND inbox_seq <= ? ORDER BY inbox_seq',
    ),
    selectLastSeen: db.prepare('SELECT COALESCE(MAX(inbox_seq), 0) AS seq FROM seen'),
    selectKnown: db.prepare('SELECT 1 AS known FROM seen WHERE document_id = ?'),
    selectRecord: db.prepare('SELECT record FROM seen WHERE document_id = ?'),
  };
}

export class Inbox {
  readonly #db: DatabaseSync;
  readonly #sql: ReturnType<typeof statements>;

  static open(dataDir: string): Inbox {
    return new Inbox(openDatabase(dataDir));
  }

  private constructor(db: DatabaseSync) {
    this.#db = db;
    this.#sql = statements(db);
  }

  /** Appends an acknowledged event; durable (fsynced) when it returns. */
  append({ receivedAt, method, documentId, body }: InboxEvent): number {
    return Number(this.#sql.insertInbox.run(receivedAt.toISOString(), method, documentId, body).lastInsertRowid);
  }

  /** Appends events in one transaction, one disk sync for all; durable when it returns. Their seqs, in order. */
  appendMany(events: readonly InboxEvent[]): number[] {
    if (events.length === 1) return [this.append(events[0]!)];
    return transaction(this.#db, () => events.map((event) => this.append(event)));
  }

  /** Keeps a body answered 400 aside; returns its id in the rejected table. */
  reject(entry: {
    receivedAt: Date;
    method: string;
    contentType: string | undefined;
    reason: string;
    body: Uint8Array;
  }): number {
    const { receivedAt, method, contentType, reason, body } = entry;
    return Number(
      this.#sql.insertRejected.run(receivedAt.toISOString(), method, contentType ?? null, reason, body).lastInsertRowid,
    );
  }

  /**
   * The oldest unprocessed events, as many as fit in `maxBytes` of bodies (at least one, however
   * large): what the worker holds at once is bounded by size, not by a count of events.
   */
  unprocessed(maxBytes: number): InboxRow[] {
    const rows: InboxRow[] = [];
    let bytes = 0;
    // Breaking out of the iteration resets the statement: the bodies past the budget are never read.
    for (const row of this.#sql.selectUnprocessed.iterate()) {
      const body = _bytes(row.body);
      if (rows.length > 0 && bytes + body.length > maxBytes) break;
      rows.push({ seq: Number(row.seq), method: String(row.method), body });
      bytes += body.length;
    }
    return rows;
  }

  /**
   * Settles inbox rows in one transaction: a document_id seen for the first time is claimed
   * (its record stored), any other is a duplicate. Returns each row's outcome.
   */
  settle(
    rows: readonly { seq: number; claim?: { record: DocumentRecord; nullFields: string[] } }[],
    at: Date,
  ): Outcome[] {
    const when = at.toISOString();
    return this.#bookkeeping(() =>
      rows.map(({ seq, claim }) => {
        const outcome = claim === undefined ? 'invalid' : this.#claimed(seq, claim, when) ? 'new' : 'duplicate';
        this.#sql.markProcessed.run(when, outcome, seq);
        return outcome;
      }),
    );
  }

  /** Documents processed but not yet written to the outputs, oldest first, as many as fit in `maxBytes` of records (at least one). */
  unwritten(maxBytes: number): SeenRow[] {
    return _seenRows(this.#sql.selectUnwritten.iterate(), maxBytes);
  }

  /** Forgets the body of a processed event whose document was recorded before with the same data. */
  dropBody(seq: number): void {
    this.#bookkeeping(() => this.#sql.dropBody.run(seq));
  }

  markWritten(documentIds: readonly string[]): void {
    this.#bookkeeping(() => {
      for (const id of documentIds) this.#sql.markWritten.run(id);
    });
  }

  /** Whether a document of this id was processed: an output's row of another id is not this inbox's. */
  knows(documentId: string): boolean {
    return this.#sql.selectKnown.get(documentId) !== undefined;
  }

  /** The stored record of a processed document, as stored (JSON text): a duplicate is compared with it. */
  recordText(documentId: string): string | undefined {
    const row = this.#sql.selectRecord.get(documentId);
    return row === undefined ? undefined : String(row.record);
  }

  /** The inbox_seq of the last document processed (0 when none): a fixed end for a pass over seen (whole-file outputs are rebuilt from it, a page at a time). */
  lastSeenSeq(): number {
    return Number(this.#sql.selectLastSeen.get()?.seq ?? 0);
  }

  /**
   * Documents processed after `afterSeq` up to `upToSeq`, in arrival order, as many as fit in
   * `maxBytes` of stored records (at least one): pages for outputs written without holding them all.
   */
  seenPage(afterSeq: number, upToSeq: number, maxBytes: number): SeenRow[] {
    return _seenRows(this.#sql.selectPage.iterate(afterSeq, upToSeq), maxBytes);
  }

  close(): void {
    this.#db.close();
  }

  /** Stores a document's record unless its document_id was seen before; whether it was new. */
  #claimed(seq: number, claim: { record: DocumentRecord; nullFields: string[] }, when: string): boolean {
    const { record, nullFields } = claim;
    const inserted = this.#sql.claim.run(
      record.document_id ?? '',
      seq,
      record.file,
      JSON.stringify(record),
      JSON.stringify(nullFields),
      when,
    );
    return inserted.changes > 0;
  }

  /**
   * The worker's own bookkeeping commits relaxed (synchronous=NORMAL, src/sqlite.ts): a power
   * cut can lose it, and then the work is redone, which deduplication and the output
   * reconciliation make harmless; it spares the event loop an fsync that would delay the next
   * acknowledgement. Appends, which are acknowledged, stay FULL.
   */
  #bookkeeping<T>(fn: () => T): T {
    return transaction(this.#db, fn, { relaxed: true });
  }
}

type Row = Record<string, SQLOutputValue>;

/** Seen rows as many as fit in `maxBytes` of stored records (at least one). */
function _seenRows(rows: Iterable<Row>, maxBytes: number): SeenRow[] {
  const out: SeenRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    out.push(_seenRow(row));
    bytes += String(row.record).length + String(row.null_fields).length;
    if (bytes >= maxBytes) break;
  }
  return out;
}

function _seenRow(row: Row): SeenRow {
  const record = DocumentRecord.parse(JSON.parse(String(row.record)));
  return {
    document_id: String(row.document_id),
    inbox_seq: Number(row.inbox_seq),
    record,
    null_fields: _strings(row.null_fields),
  };
}

function _strings(value: SQLOutputValue | undefined): string[] {
  const parsed: unknown = JSON.parse(String(value));
  return Array.isArray(parsed) ? parsed.map(String) : [];
}

function _bytes(value: SQLOutputValue | undefined): Uint8Array {
  return value instanceof Uint8Array ? value : new TextEncoder().encode(String(value));
}
