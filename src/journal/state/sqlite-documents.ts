import type { DatabaseSync } from 'node:sqlite';
import type { JournalFact as FactSchema } from '../journal-facts.ts';
import { factKey, type JournalFact } from '../journal.ts';
import type { History, WorkerInfo } from './journal-state.ts';
import {
  type Cell,
  type DocumentRow,
  parseFact,
  parseJson,
  readState,
  splitState,
  step,
  type Statements,
} from './projection.ts';

/**
 * The SQLite journal's facts and projection rows (projection.ts), inside a transaction the
 * caller holds: a fact inserted, a document's row read and written, a document replayed from
 * its facts, an older journal imported; and the history `extract status` shows.
 */
export class SqliteDocuments {
  readonly #statement: Statements;
  readonly #now: () => number;

  constructor(statement: Statements, now: () => number) {
    this.#statement = statement;
    this.#now = now;
  }

  /**
   * Takes in the facts of an older journal once (sqlite-state.ts `importFacts`); returns the
   * facts taken.
   */
  importFacts(facts: readonly JournalFact[], source: string): number {
    const taken = Number(this.#statement('SELECT facts FROM extract_imports WHERE source = ?').get(source)?.facts ?? 0);
    // A legacy reset forgets every fact before it in its file: those are not taken.
    const lastReset = facts.findLastIndex((f) => f.fact === 'reset');
    const fresh = facts.slice(Math.max(taken, lastReset + 1));
    const touched = new Set<string>();
    let parsers = 0;
    for (const fact of fresh) {
      // What a key was found to be (identity.ts) is about no document: kept, so it is not asked again.
      if (fact.fact === 'parser') {
        this.insertFact(null, fact, null);
        parsers++;
        continue;
      }
      const key = factKey(fact);
      if (key === undefined) continue;
      this.insertFact(key, fact, null);
      touched.add(key);
    }
    for (const key of touched) this.#replay(key);
    this.#statement(
      `INSERT INTO extract_imports (source, facts, at) VALUES (?, ?, ?)
       ON CONFLICT (source) DO UPDATE SET facts = excluded.facts, at = excluded.at`,
    ).run(source, Math.max(taken, facts.length), this.#now());
    return touched.size === 0 && parsers === 0
      ? 0
      : fresh.filter((f) => f.fact !== 'reset' && f.fact !== 'journal').length;
  }

  insertFact(key: string | null, fact: JournalFact, worker: string | null): number {
    const { lastInsertRowid } = this.#statement(
      'INSERT INTO extract_facts (key, fact, body, worker, at) VALUES (?, ?, ?, ?, ?)',
    ).run(key, fact.fact, JSON.stringify(fact), worker, this.#now());
    return Number(lastInsertRowid);
  }

  read(key: string): DocumentRow {
    const row = this.#statement('SELECT state, results, before FROM extract_documents WHERE key = ?').get(key);
    if (row === undefined) return { state: undefined, before: undefined };
    return { state: readState(row.state, row.results), before: readState(row.before, null) };
  }

  write(key: string, doc: DocumentRow, lastFact: number, lastWorker: string | null): void {
    const { state, results } = splitState(doc.state);
    this.#statement(
      `INSERT INTO extract_documents (key, state, results, before, last_fact, last_worker) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET state = excluded.state, results = excluded.results, before = excluded.before,
           last_fact = excluded.last_fact, last_worker = excluded.last_worker`,
    ).run(key, state, results, doc.before === undefined ? null : JSON.stringify(doc.before), lastFact, lastWorker);
  }

  /** A document's state from all its facts, in the order they happened (imported facts are older than their ids). */
  #replay(key: string): void {
    const rows = this.#statement('SELECT id, body, worker FROM extract_facts WHERE key = ? ORDER BY id')
      .all(key)
      .map((row) => ({
        id: Number(row.id),
        worker: row.worker === null ? null : String(row.worker),
        fact: parseFact(row.body),
      }))
      .filter((row) => row.fact !== undefined);
    rows.sort((a, b) => (a.fact!.at < b.fact!.at ? -1 : a.fact!.at > b.fact!.at ? 1 : a.id - b.id));
    let doc: DocumentRow = { state: undefined, before: undefined };
    for (const row of rows) doc = step(doc, key, row.fact!);
    const last = rows.at(-1);
    if (last !== undefined) this.write(key, doc, last.id, last.worker);
  }
}

function isoTime(ms: Cell): string {
  return new Date(Number(ms)).toISOString();
}

/** Every fact with its worker, and the workers: what `extract status` shows, in one read transaction. */
/** `schema` is journal-facts.ts's, loaded by the caller only for this. */
export function readHistory(db: DatabaseSync, now: number, schema: typeof FactSchema): History {
  const out: History = { facts: [], workers: [], skipped: 0 };
  db.exec('BEGIN');
  try {
    for (const row of db.prepare('SELECT body, worker FROM extract_facts ORDER BY id').iterate()) {
      const parsed = schema.safeParse(parseJson(row.body));
      if (parsed.success)
        out.facts.push({ fact: parsed.data, worker: row.worker === null ? null : String(row.worker) });
      else out.skipped++;
    }
    const workers = db
      .prepare(
        `SELECT w.id, w.host, w.pid, w.started_at, w.seen_at, w.finished_at, w.lease_ms,
                (SELECT count(*) FROM extract_claims c WHERE c.worker = w.id AND c.expires > ?) AS holding
           FROM extract_workers w ORDER BY w.started_at, w.rowid`,
      )
      .all(now);
    out.workers = workers.map(
      (w): WorkerInfo => ({
        id: String(w.id),
        host: String(w.host),
        pid: Number(w.pid),
        started: isoTime(w.started_at),
        seen: isoTime(w.seen_at),
        finished: w.finished_at === null ? null : isoTime(w.finished_at),
        alive: w.finished_at === null && Number(w.seen_at) > now - Number(w.lease_ms),
        holding: Number(w.holding),
      }),
    );
  } finally {
    db.exec('COMMIT');
  }
  return out;
}
