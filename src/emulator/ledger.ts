import type { DatabaseSync } from 'node:sqlite';
import { MAX_BALANCE_PAGES, type LedgerBody, type LedgerEntry } from '../contract/index.ts';
import { GatewayError } from './errors.ts';
import { setMetaOnce } from './store.ts';

/**
 * Credits (spec, "Limits"): one per page of the real page count, reserved before
 * processing, refunded when extraction fails. The balance is derived from the ledger,
 * never stored beside it, so the two cannot disagree. Callers run reserve and refund
 * inside the transaction that changes the document, so a crash leaves both or neither.
 */
export type Ledger = {
  balance(): number;
  /** Reserves `pages` for a document; insufficient_credits when the balance cannot cover it. */
  reserve(doc: { document_id: string; file_name: string; sha256: string }, pages: number, atMs: number): void;
  /** Refunds a document's reservation, once; a document never reserved is not refunded. */
  refund(documentId: string, atMs: number): void;
  topUp(pages: number, atMs: number): void;
  body(): LedgerBody;
};

type Row = Omit<LedgerEntry, 'at'> & { at: number };

export function createLedger(db: DatabaseSync, initialCredits: number): Ledger {
  // The opening balance is fixed when the data directory is new; later config changes do not reset it.
  const opening = Number(setMetaOnce(db, 'opening_credits', String(initialCredits)));
  const sumStmt = db.prepare(
    `SELECT COALESCE(SUM(CASE kind WHEN 'reserve' THEN -pages ELSE pages END), 0) AS delta FROM ledger`,
  );
  const insert = db.prepare(
    'INSERT INTO ledger (kind, document_id, file_name, sha256, pages, at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const reservation = db.prepare(
    `SELECT r.pages AS pages, r.file_name AS file_name, r.sha256 AS sha256,
            EXISTS (SELECT 1 FROM ledger f WHERE f.document_id = r.document_id AND f.kind = 'refund') AS refunded
     FROM ledger r WHERE r.document_id = ? AND r.kind = 'reserve'`,
  );
  const all = db.prepare('SELECT kind, document_id, file_name, sha256, pages, at FROM ledger ORDER BY seq');

  const balance = () => opening + Number((sumStmt.get() as { delta: number }).delta);

  return {
    balance,
    reserve(doc, pages, atMs) {
      // The gateway refuses such counts first (422); this keeps the ledger exact whoever calls it.
      if (!Number.isSafeInteger(pages) || pages < 0)
        throw new RangeError(`a reserve of ${pages} pages cannot be right`);
      const available = balance();
      if (pages > available) {
        throw new GatewayError(
          'insufficient_credits',
          `out of credits: the document has ${pages} page(s) and the balance is ${available}; top up and submit it again`,
        );
      }
      insert.run('reserve', doc.document_id, doc.file_name, doc.sha256, pages, atMs);
    },
    refund(documentId, atMs) {
      const r = reservation.get(documentId) as
        | { pages: number; file_name: string; sha256: string; refunded: number }
        | undefined;
      if (!r || r.refunded) return;
      insert.run('refund', documentId, r.file_name, r.sha256, r.pages, atMs);
    },
    topUp(pages, atMs) {
      const now = balance();
      if (!Number.isSafeInteger(pages) || pages < 1 || now + pages > MAX_BALANCE_PAGES) {
        throw new GatewayError(
          'invalid_request',
          `a top-up of ${pages} pages would take the balance from ${now} past the emulator's maximum of ${MAX_BALANCE_PAGES}: top up less`,
        );
      }
      insert.run('topup', null, null, null, pages, atMs);
    },
    body() {
      const entries = (all.all() as Row[]).map((r) => ({ ...r, at: new Date(r.at).toISOString() }));
      return { balance: balance(), entries };
    },
  };
}
