import type { DatabaseSync, SQLOutputValue, StatementSync } from 'node:sqlite';
import { resultsJson, storedResults } from '../../outputs/stored-results.ts';
import { replayer, type JournalFact, type KnownState } from '../journal.ts';

/**
 * The projection: what is known of each document, one row per key (its latest fact without its
 * results, the results as their own JSON text, what `unsent` would restore), kept beside the
 * facts it is the replay of. The SQLite journal keeps it in `extract_documents`, PostgreSQL in
 * its own `extract_documents`, the JSONL file's index in `known`: how a row is written, read and
 * looked up in bulk is here, once.
 */

/** Documents read ahead in one query (json_each over their keys): cheaper than a query each. */
export const PREFETCH_CHUNK = 1_000;

/** A column of a row a driver read (undefined: a column the query did not name). */
export type Cell = SQLOutputValue | undefined;

/** A document's row: its latest state, and what an `unsent` fact would restore. */
export type DocumentRow = { state: KnownState | undefined; before: KnownState | undefined };

/** journal.ts's replay step, applied to one document's stored state. */
export function step(doc: DocumentRow, key: string, fact: JournalFact): DocumentRow {
  const replay = replayer({
    known: new Map(doc.state === undefined ? [] : [[key, doc.state]]),
    before: new Map(doc.before === undefined ? [] : [[key, doc.before]]),
    parsers: new Map(),
  });
  replay.apply(fact);
  return { state: replay.known.get(key), before: replay.before.get(key) };
}

/** A completed fact's results are kept as their own text: a rerun copies them without parsing (outputs/stored-results.ts). */
export function splitState(state: KnownState | undefined): { state: string | null; results: string | null } {
  if (state === undefined) return { state: null, results: null };
  if (state.fact === 'completed' && state.results !== null) {
    const { results, ...rest } = state;
    return { state: JSON.stringify(rest), results: resultsJson(results) };
  }
  return { state: JSON.stringify(state), results: null };
}

/** Facts that are about no document, or say nothing is known of it: never a document's state. */
const NOT_A_STATE = new Set(['reset', 'unsent', 'parser', 'journal']);

/**
 * The shape only, not each fact: a projection holds facts this program validated or made; zod
 * (journal-facts.ts) would cost a rerun of 20,000 documents what the projection saves.
 */
export function readState(text: Cell, results: Cell): KnownState | undefined {
  const value = parseJson(text);
  if (typeof value !== 'object' || value === null) return undefined;
  const f = value as Record<string, unknown>;
  if (typeof f.fact !== 'string' || NOT_A_STATE.has(f.fact)) return undefined;
  if (typeof f.sha256 !== 'string' || typeof f.target !== 'string') return undefined;
  if (f.fact === 'completed' && typeof results === 'string') f.results = storedResults(results);
  return value as KnownState;
}

export function parseFact(text: Cell): JournalFact | undefined {
  const value = parseJson(text);
  return isFact(value) ? value : undefined;
}

/** Written by this program from a JournalFact: the discriminant and the time every fact has are enough. */
function isFact(value: unknown): value is JournalFact {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof Reflect.get(value, 'fact') === 'string' &&
    typeof Reflect.get(value, 'at') === 'string'
  );
}

export function parseJson(text: Cell): unknown {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export type Statements = (sql: string) => StatementSync;

/** Each statement prepared once per database: a run records two or three facts per document. */
export function statements(db: () => DatabaseSync): Statements {
  const prepared = new Map<string, StatementSync>();
  return (sql) => {
    let statement = prepared.get(sql);
    if (statement === undefined) {
      statement = db().prepare(sql);
      prepared.set(sql, statement);
    }
    return statement;
  };
}

/** Lookups of a projection table (key, state, results) by key, one at a time or read ahead in bulk. */
export type RowLookups = {
  get(key: string): KnownState | undefined;
  prefetch(keys: readonly string[]): void;
  /** The targets the table names documents of. */
  targets(): string[];
};

export function rowLookups(statement: Statements, table: string): RowLookups {
  // Documents read ahead (prefetch), each until its first lookup.
  const ahead = new Map<string, KnownState | undefined>();
  return {
    get: (key) => {
      if (ahead.has(key)) {
        const state = ahead.get(key);
        ahead.delete(key);
        return state;
      }
      const row = statement(`SELECT state, results FROM ${table} WHERE key = ?`).get(key);
      return row === undefined ? undefined : readState(row.state, row.results);
    },
    prefetch: (keys) => {
      if (keys.length * 2 >= Number(statement(`SELECT max(rowid) AS n FROM ${table}`).get()?.n ?? 0)) {
        // The batch is most of the journal (a rerun): one pass over its rows costs less than lookups.
        const want = new Set(keys);
        for (const key of keys) ahead.set(key, undefined);
        for (const row of statement(`SELECT key, state, results FROM ${table}`).iterate()) {
          const key = String(row.key);
          if (want.has(key)) ahead.set(key, readState(row.state, row.results));
        }
        return;
      }
      const many = statement(`SELECT d.key, d.state, d.results FROM json_each(?) j JOIN ${table} d ON d.key = j.value`);
      for (let i = 0; i < keys.length; i += PREFETCH_CHUNK) {
        const chunk = keys.slice(i, i + PREFETCH_CHUNK);
        for (const key of chunk) ahead.set(key, undefined);
        for (const row of many.all(JSON.stringify(chunk)))
          ahead.set(String(row.key), readState(row.state, row.results));
      }
    },
    // A skip scan over the primary key: one probe per target (keys are target:sha256, and ';' follows ':').
    targets: () =>
      statement(
        `WITH RECURSIVE t(target) AS (
           SELECT (SELECT substr(key, 1, instr(key, ':') - 1) FROM ${table} ORDER BY key LIMIT 1)
           UNION ALL
           SELECT (SELECT substr(key, 1, instr(key, ':') - 1) FROM ${table} WHERE key > t.target || ';' ORDER BY key LIMIT 1)
             FROM t WHERE t.target IS NOT NULL)
         SELECT target FROM t WHERE target IS NOT NULL`,
      )
        .all()
        .map((row) => String(row.target)),
  };
}
