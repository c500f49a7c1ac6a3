import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type SQLOutputValue } from 'node:sqlite';
import { isSqliteBusy } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { transaction } from '../sqlite.ts';
import { DocumentRecord } from '../outputs/record-schema.ts';

/**
 * The receiver's durable state, one SQLite database in the data directory:
 * - inbox: every acknowledged event, raw, appended before the 200 is sent;
 * - seen: one row per document_id ever processed, with its record (deduplication across
 *   restarts, and the source of whole-file outputs and the review list);
 * - rejected: bodies answered 400, kept for inspection.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS inbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  received_at TEXT NOT NULL,
  method TEXT NOT NULL,
  document_id TEXT NOT NULL,
  body BLOB NOT NULL,
  processed_at TEXT,
  outcome TEXT CHECK (outcome IN ('new', 'duplicate', 'invalid'))
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
type Outcome = 'new' | 'duplicate' | 'invalid';

export type InboxEvent = { receivedAt: Date; method: string; documentId: string; body: Uint8Array };

export type Inbox = {
  /** Appends an acknowledged event; durable (fsynced) when it returns. */
  append(event: InboxEvent): number;
  /** Appends events in one transaction, one disk sync for all; durable when it returns. Their seqs, in order. */
  appendMany(events: readonly InboxEvent[]): number[];
  /** Keeps a body answered 400 aside; returns its id in the rejected table. */
  reject(entry: {
    receivedAt: Date;
    method: string;
    contentType: string | undefined;
    reason: string;
    body: Uint8Array;
  }): number;
  /**
   * The oldest unprocessed events, as many as fit in `maxBytes` of bodies (at least one, however
   * large): what the worker holds at once is bounded by size, not by a count of events.
   */
  unprocessed(maxBytes: number): InboxRow[];
  /**
   * Settles inbox rows in one transaction: a document_id seen for the first time is claimed
   * (its record stored), any other is a duplicate. Returns each row's outcome.
   */
  settle(
    rows: readonly { seq: number; claim?: { record: DocumentRecord; nullFields: string[] } }[],
    at: Date,
  ): Outcome[];
  /** Documents processed but not yet written to the outputs, oldest first, as many as fit in `maxBytes` of records (at least one). */
  unwritten(maxBytes: number): SeenRow[];
  markWritten(documentIds: readonly string[]): void;
  /** The inbox_seq of the last document processed (0 when none): a fixed end for a pass over seen (whole-file outputs are rebuilt from it, a page at a time). */
  lastSeenSeq(): number;
  /**
   * Documents processed after `afterSeq` up to `upToSeq`, in arrival order, as many as fit in
   * `maxBytes` of stored records (at least one): pages for outputs written without holding them all.
   */
  seenPage(afterSeq: number, upToSeq: number, maxBytes: number): SeenRow[];
  close(): void;
};

export function openInbox(dataDir: string): Inbox {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, INBOX_FILE);
  const db = new DatabaseSync(path);
  try {
    // WAL + synchronous=FULL: a committed append is on disk before the 200 leaves, so a
    // kill -9 the next instant loses nothing. EXCLUSIVE locking keeps a second listener off
    // the same inbox (two workers would race on the outputs).
    db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
    db.exec('BEGIN IMMEDIATE; COMMIT;');
    db.exec(SCHEMA);
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

  const insertInbox = db.prepare('INSERT INTO inbox (received_at, method, document_id, body) VALUES (?, ?, ?, ?)');
  const insertRejected = db.prepare(
    'INSERT INTO rejected (received_at, method, content_type, reason, body) VALUES (?, ?, ?, ?, ?)',
  );
  const selectUnprocessed = db.prepare('SELECT seq, method, body FROM inbox WHERE processed_at IS NULL ORDER BY seq');
  const claim = db.prepare(
    'INSERT INTO seen (document_id, inbox_seq, file_name, record, null_fields, first_seen_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (document_id) DO NOTHING',
  );
  const markProcessed = db.prepare('UPDATE inbox SET processed_at = ?, outcome = ? WHERE seq = ?');
  const selectUnwritten = db.prepare(
    'SELECT document_id, inbox_seq, record, null_fields FROM seen WHERE written = 0 ORDER BY inbox_seq',
  );
  const markWritten = db.prepare('UPDATE seen SET written = 1 WHERE document_id = ?');
  const selectPage = db.prepare(
    'SELECT document_id, inbox_seq, record, null_fields FROM seen WHERE inbox_seq > ? AND inbox_seq <= ? ORDER BY inbox_seq',
  );
  const selectLastSeen = db.prepare('SELECT COALESCE(MAX(inbox_seq), 0) AS seq FROM seen');

  /**
   * The worker's own bookkeeping commits relaxed (synchronous=NORMAL, src/sqlite.ts): a power
   * cut can lose it, and then the work is redone, which deduplication and the output
   * reconciliation make harmless; it spares the event loop an fsync that would delay the next
   * acknowledgement. Appends, which are acknowledged, stay FULL.
   */
  const bookkeeping = <T>(fn: () => T): T => transaction(db, fn, { relaxed: true });

  return {
    append({ receivedAt, method, documentId, body }) {
      return Number(insertInbox.run(receivedAt.toISOString(), method, documentId, body).lastInsertRowid);
    },
    appendMany(events) {
      if (events.length === 1) return [this.append(events[0]!)];
      return transaction(db, () =>
        events.map(({ receivedAt, method, documentId, body }) =>
          Number(insertInbox.run(receivedAt.toISOString(), method, documentId, body).lastInsertRowid),
        ),
      );
    },
    reject({ receivedAt, method, contentType, reason, body }) {
      return Number(
        insertRejected.run(receivedAt.toISOString(), method, contentType ?? null, reason, body).lastInsertRowid,
      );
    },
    unprocessed(maxBytes) {
      const rows: InboxRow[] = [];
      let bytes = 0;
      // Breaking out of the iteration resets the statement: the bodies past the budget are never read.
      for (const row of selectUnprocessed.iterate()) {
        const body = _bytes(row.body);
        if (rows.length > 0 && bytes + body.length > maxBytes) break;
        rows.push({ seq: Number(row.seq), method: String(row.method), body });
        bytes += body.length;
      }
      return rows;
    },
    settle(rows, at) {
      const when = at.toISOString();
      return bookkeeping(() =>
        rows.map(({ seq, claim: c }) => {
          let outcome: Outcome = 'invalid';
          if (c !== undefined) {
            const documentId = c.record.document_id ?? '';
            const inserted = claim.run(
              documentId,
              seq,
              c.record.file,
              JSON.stringify(c.record),
              JSON.stringify(c.nullFields),
              when,
            );
            outcome = inserted.changes > 0 ? 'new' : 'duplicate';
          }
          markProcessed.run(when, outcome, seq);
          return outcome;
        }),
      );
    },
    unwritten(maxBytes) {
      const rows: SeenRow[] = [];
      let bytes = 0;
      for (const row of selectUnwritten.iterate()) {
        rows.push(_seenRow(row));
        bytes += String(row.record).length + String(row.null_fields).length;
        if (bytes >= maxBytes) break;
      }
      return rows;
    },
    markWritten(documentIds) {
      bookkeeping(() => {
        for (const id of documentIds) markWritten.run(id);
      });
    },
    lastSeenSeq() {
      return Number(selectLastSeen.get()?.seq ?? 0);
    },
    seenPage(afterSeq, upToSeq, maxBytes) {
      const rows: SeenRow[] = [];
      let bytes = 0;
      for (const row of selectPage.iterate(afterSeq, upToSeq)) {
        rows.push(_seenRow(row));
        bytes += String(row.record).length + String(row.null_fields).length;
        if (bytes >= maxBytes) break;
      }
      return rows;
    },
    close() {
      db.close();
    },
  };
}

type Row = Record<string, SQLOutputValue>;

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
