import type { DatabaseSync } from 'node:sqlite';
import type { KnownState, ParserFact, Store } from '../journal.ts';
import { splitState } from './projection.ts';

/**
 * What a run changed over the JSONL journal's index (journal-index.ts): its stores layered over
 * the index's rows, and how the changes are written into it with the journal's new offset.
 */

export type Meta = { v: number; ino: string; bytes: number; tail: string; skipped: number };

export type Stores = { known: Layered<KnownState>; before: Layered<KnownState>; parsers: Map<string, ParserFact> };

/** Changes over what the index holds: set, deleted (undefined), or all cleared (a legacy reset). */
export class Layered<V> implements Store<V> {
  changed = new Map<string, V | undefined>();
  cleared = false;
  readonly base: (key: string) => V | undefined;
  constructor(base: (key: string) => V | undefined) {
    this.base = base;
  }
  get(key: string): V | undefined {
    if (this.changed.has(key)) return this.changed.get(key);
    return this.cleared ? undefined : this.base(key);
  }
  set(key: string, value: V): void {
    this.changed.set(key, value);
  }
  delete(key: string): void {
    this.changed.set(key, undefined);
  }
  clear(): void {
    this.changed.clear();
    this.cleared = true;
  }
  /** The same base and a copy of the changes: what was known before this run's facts stays as it was. */
  fork(): Layered<V> {
    const copy = new Layered(this.base);
    copy.changed = new Map(this.changed);
    copy.cleared = this.cleared;
    return copy;
  }
}

export function writeChanges(db: DatabaseSync, stores: Stores, meta: Meta): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    if (stores.known.cleared) db.exec('DELETE FROM known');
    if (stores.before.cleared) db.exec('DELETE FROM before');
    const putKnown = db.prepare(
      'INSERT INTO known (key, state, results, file) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET state = excluded.state, results = excluded.results, file = excluded.file',
    );
    const dropKnown = db.prepare('DELETE FROM known WHERE key = ?');
    for (const [key, fact] of stores.known.changed) {
      if (fact === undefined) dropKnown.run(key);
      else {
        const { state, results } = splitState(fact);
        putKnown.run(key, state, results, fact.file);
      }
    }
    const putBefore = db.prepare(
      'INSERT INTO before (key, state) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET state = excluded.state',
    );
    const dropBefore = db.prepare('DELETE FROM before WHERE key = ?');
    for (const [key, fact] of stores.before.changed) {
      if (fact === undefined) dropBefore.run(key);
      else putBefore.run(key, JSON.stringify(fact));
    }
    db.exec('DELETE FROM parsers');
    const putParser = db.prepare('INSERT INTO parsers (target, body) VALUES (?, ?)');
    for (const [target, fact] of stores.parsers) putParser.run(target, JSON.stringify(fact));
    db.prepare(
      `INSERT INTO meta (id, v, ino, bytes, tail, skipped) VALUES (1, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET v = excluded.v, ino = excluded.ino, bytes = excluded.bytes, tail = excluded.tail, skipped = excluded.skipped`,
    ).run(meta.v, meta.ino, meta.bytes, meta.tail, meta.skipped);
    db.exec('COMMIT');
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw err;
  }
  // What is saved is now the base: the changes are no longer changes.
  for (const layer of [stores.known, stores.before]) {
    layer.changed.clear();
    layer.cleared = false;
  }
}
