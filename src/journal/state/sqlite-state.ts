import { readHistory, SqliteDocuments } from './sqlite-documents.ts';
import type { DatabaseSync } from 'node:sqlite';
import { transaction } from '../../sqlite.ts';
import { defaultLockDeps, type LockDeps } from '../lock.ts';
import {
  factKey,
  type JournalFact,
  type JournalView,
  type KnownLookup,
  type KnownState,
  type ParserFact,
  type Replay,
} from '../journal.ts';
import { ClaimLostError, type Claim, type History, type OpenStateOptions, type StateJournal } from './journal-state.ts';
import { parseFact, readState, rowLookups, statements, step } from './projection.ts';
import { commitGroups, Refused } from './group-commit.ts';
import type { Guard } from './sqlite-guard.ts';
import { claimOf, LeaseKeeper, leave } from './worker.ts';
import { FACTS, factsIn, MarkWriter } from './sqlite-mark.ts';

/**
 * The SQLite journal once open (sqlite.ts opens it; memory.ts opens one in memory): facts and
 * their projection (projection.ts) written in one transaction per group (group-commit.ts),
 * claims and leases as PostgreSQL keeps them.
 */

/** How often, at most, a run copies the write-ahead log into the database file after a commit. */
const CHECKPOINT_EVERY_MS = 1_000;

/**
 * The claim statements that name their documents by key. `+worker` keeps SQLite's planner off
 * the worker index, which it preferred: through it a release read every claim this worker held
 * (a run holds every document it has not finished), so releasing each of N documents in turn was
 * O(N^2), where by key each release reads its own row. Exported for the test of their query plans.
 */
export const CLAIMS_BY_KEY = {
  release:
    'UPDATE extract_claims SET worker = NULL, expires = 0 WHERE key IN (SELECT value FROM json_each(?)) AND +worker = ?',
  holders: `SELECT key, worker FROM extract_claims
              WHERE key IN (SELECT value FROM json_each(?)) AND +worker IS NOT NULL AND expires > ?`,
} as const;

/** The workers this process opened: another worker with its pid was an earlier process's. */
export const OWN_WORKERS = new Set<string>();

/** An older journal taken in once (`importFacts`), named by its resolved path. */
export type ImportSource = string;

export class SqliteState implements StateJournal {
  readonly shared: boolean;
  readonly where: string;
  readonly worker: string;
  readonly #db: DatabaseSync;
  readonly #guard: Guard;
  readonly #now: () => number;
  readonly #leaseMs: number;
  readonly #lost = new Set<string>();
  /** Each statement prepared once per journal: a run records two or three facts per document. */
  readonly #statement = statements(() => this.#db);
  /** The facts and their projection rows. */
  readonly #docs = new SqliteDocuments(this.#statement, () => this.#now());
  /** Facts waiting for the next group's transaction (group-commit.ts). */
  readonly #facts = commitGroups<JournalFact, undefined>((group) => this.#commit(group));
  readonly #lease: LeaseKeeper;
  /** The highest fact id of the replay: facts above it were written while this run went on. */
  #watermark = 0;
  /** When the write-ahead log was last copied into the database file. */
  #checkpointAt: number | undefined;
  /** The journal's noted size (sqlite-mark.ts): kept by a run that writes, none for a dry run. */
  readonly #marker: MarkWriter | undefined;
  /** This process and host, and how to tell whether another process of this host is alive. */
  readonly #self: LockDeps;

  constructor(
    db: DatabaseSync,
    guard: Guard,
    worker: string,
    options: OpenStateOptions,
    leaseMs: number,
    shared = true,
  ) {
    this.shared = shared;
    this.where = guard.where;
    this.worker = worker;
    this.#db = db;
    this.#guard = guard;
    this.#now = options.now ?? Date.now;
    this.#leaseMs = leaseMs;
    this.#self = options.lock ?? defaultLockDeps();
    this.#lease = new LeaseKeeper(this.where, options, leaseMs, () => this.#renew());
    if (leaseMs > 0) {
      this.#marker = new MarkWriter(this.where);
      this.#marker.write(factsIn(db));
    }
  }

  replay(): Promise<Replay> {
    return this.#snapshot(() => {
      const known = new Map<string, KnownState>();
      for (const row of this.#db.prepare('SELECT key, state, results FROM extract_documents').all()) {
        const state = readState(row.state, row.results);
        if (state !== undefined) known.set(String(row.key), state);
      }
      return known;
    });
  }

  /**
   * What a run starts from, without reading every document: the watermark, the parser facts
   * (few), and lookups by key through `extract_documents`' primary key. Each lookup reads the
   * latest row, which may be newer than the watermark (another worker's fact): a claim tells.
   */
  view(): Promise<JournalView> {
    return this.#snapshot(() => this.#lookups());
  }

  /**
   * One read transaction: the watermark, the documents `read` reads and the parser facts are one
   * snapshot. What each API key is known to be (identity.ts): few facts, about no document, read whole.
   */
  #snapshot<K>(read: () => K): Promise<{ known: K; parsers: Map<string, ParserFact>; skipped: 0; torn: false }> {
    return this.#guard.run('read the journal', () => {
      const db = this.#db;
      db.exec('BEGIN');
      try {
        this.#watermark = Number(db.prepare('SELECT coalesce(max(id), 0) AS id FROM extract_facts').get()?.id ?? 0);
        return { known: read(), parsers: this.#parsers(), skipped: 0, torn: false };
      } finally {
        db.exec('COMMIT');
      }
    });
  }

  #lookups(): KnownLookup {
    return {
      ...rowLookups(this.#statement, 'extract_documents'),
      // A scan: asked only before hashing a large file while it is sent, which a shared journal never does.
      names: (file) =>
        this.#statement(
          "SELECT 1 AS hit FROM extract_documents WHERE state IS NOT NULL AND json_extract(state, '$.file') = ? LIMIT 1",
        ).get(file) !== undefined,
    };
  }

  #parsers(): Map<string, ParserFact> {
    const parsers = new Map<string, ParserFact>();
    for (const row of this.#db.prepare('SELECT body FROM extract_facts WHERE key IS NULL ORDER BY id').all()) {
      const fact = parseFact(row.body);
      if (fact?.fact === 'parser') parsers.set(fact.target, fact);
    }
    return parsers;
  }

  /**
   * Group commit, as the JSONL journal does: facts appended in one turn of the event loop (the
   * documents whose answers arrived together) go to disk in one transaction and one sync, and
   * each append resolves only once that transaction has committed. A `sending` whose claim was
   * lost is refused alone (it writes nothing); any other failure refuses the whole group, none
   * of which was written.
   */
  append(fact: JournalFact): Promise<void> {
    return this.#facts.add(fact);
  }

  async #commit(group: JournalFact[]): Promise<Array<Refused | undefined>> {
    const answers = await this.#guard.run('record a fact', () =>
      transaction(this.#db, () => group.map((fact) => this.#record(fact))),
    );
    this.#mark();
    return answers;
  }

  /** One fact, inside the group's transaction; a lost claim is returned (nothing written), not thrown. */
  #record(fact: JournalFact): Refused | undefined {
    const key = factKey(fact) ?? null;
    if (fact.fact === 'sending' && key !== null) {
      // Only the holder may spend: the claim is checked (and its lease extended) in the same transaction.
      const held = this.#statement('UPDATE extract_claims SET expires = ? WHERE key = ? AND worker = ?').run(
        this.#now() + this.#leaseMs,
        key,
        this.worker,
      );
      if (held.changes === 0) {
        this.#lost.add(key);
        return new Refused(new ClaimLostError(key));
      }
    }
    const id = this.#docs.insertFact(key, fact, this.worker);
    // A legacy reset forgets all before it; a parser or journal fact is about no document.
    if (fact.fact === 'reset') this.#db.exec('DELETE FROM extract_documents');
    else if (key !== null) this.#docs.write(key, step(this.#docs.read(key), key, fact), id, this.worker);
    return undefined;
  }

  claim(keys: readonly string[], max: number): Promise<Claim[]> {
    if (keys.length === 0 || max <= 0) return Promise.resolve([]);
    const unique = [...new Set(keys)];
    return this.#guard.run('claim documents', () =>
      transaction(
        this.#db,
        () => {
          const now = this.#now();
          this.#expireDeadHolders(now);
          // In key order, as PostgreSQL takes them: the workers' claims interleave less.
          const free = this.#db
            .prepare(
              `SELECT j.value AS key, c.worker AS holder FROM json_each(?) j LEFT JOIN extract_claims c ON c.key = j.value
                WHERE c.key IS NULL OR c.worker IS NULL OR c.worker = ? OR c.expires <= ?
                ORDER BY j.value LIMIT ?`,
            )
            .all(JSON.stringify(unique), this.worker, now, Math.min(Math.floor(max), unique.length));
          const take = this.#db.prepare(
            `INSERT INTO extract_claims (key, worker, expires, claimed_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (key) DO UPDATE SET worker = excluded.worker, expires = excluded.expires, claimed_at = excluded.claimed_at`,
          );
          const latest = this.#db.prepare('SELECT last_fact, last_worker FROM extract_documents WHERE key = ?');
          return free.map((row): Claim => {
            const key = String(row.key);
            const holder = row.holder === null ? null : String(row.holder);
            take.run(key, this.worker, now + this.#leaseMs, now);
            const last = latest.get(key);
            return claimOf(
              key,
              this.#docs.read(key).state,
              last === undefined
                ? undefined
                : { id: Number(last.last_fact), worker: last.last_worker === null ? null : String(last.last_worker) },
              { worker: this.worker, watermark: this.#watermark },
              holder,
            );
          });
        },
        { relaxed: true },
      ),
    );
  }

  async release(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#guard.run('release documents', () =>
      transaction(this.#db, () => this.#db.prepare(CLAIMS_BY_KEY.release).run(JSON.stringify(keys), this.worker), {
        relaxed: true,
      }),
    );
  }

  lost(key: string): boolean {
    return this.#lost.has(key);
  }

  holders(keys: readonly string[]): Promise<Map<string, string>> {
    return this.#guard.run('read the claims', () => {
      const rows = this.#db.prepare(CLAIMS_BY_KEY.holders).all(JSON.stringify(keys), this.#now());
      return new Map(rows.map((r) => [String(r.key), String(r.worker)]));
    });
  }

  async history(): Promise<History> {
    const { JournalFact } = await import('../journal-facts.ts');
    return this.#guard.run('read the journal', () => readHistory(this.#db, this.#now(), JournalFact));
  }

  /**
   * Takes in the facts of an older journal (the JSONL file) once: `source` names it (its
   * resolved path). The file is append-only, so a second import of it takes only the facts
   * past those already taken, and importing it again unchanged adds nothing. A document this
   * journal already knows is replayed again over all its facts in the order they happened
   * (their `at`), so an old fact cannot hide a newer outcome. Returns the facts taken.
   */
  importFacts(facts: readonly JournalFact[], source: ImportSource): Promise<number> {
    return this.#guard.run('import an older journal', () =>
      transaction(this.#db, () => this.#docs.importFacts(facts, source)),
    );
  }

  async close(): Promise<void> {
    if (!this.#db.isOpen) return;
    // What was appended is written before the file is closed (each append's caller hears how it went).
    await this.#facts.settle();
    if (!this.#db.isOpen) return;
    await leave(
      this.#lease,
      this.#leaseMs > 0,
      () => {
        const now = this.#now();
        transaction(
          this.#db,
          () => {
            this.#db
              .prepare('UPDATE extract_workers SET finished_at = ?, seen_at = ? WHERE id = ?')
              .run(now, now, this.worker);
            this.#db.prepare('UPDATE extract_claims SET worker = NULL, expires = 0 WHERE worker = ?').run(this.worker);
          },
          { relaxed: true },
        );
      },
      () => {
        OWN_WORKERS.delete(this.worker);
        if (this.#leaseMs > 0) this.#mark(true);
        this.#marker?.close();
        this.#db.close();
      },
    );
  }

  /**
   * After each commit: the journal's size noted (sqlite-mark.ts), so that a journal that later
   * reads as less is caught; now and then (and at close) the write-ahead log copied into the
   * database file, where a torn log frame cannot take it.
   */
  #mark(checkpoint = false): void {
    const at = Date.now();
    try {
      if (checkpoint || this.#checkpointAt === undefined || at - this.#checkpointAt >= CHECKPOINT_EVERY_MS) {
        this.#checkpointAt = at;
        this.#db.exec('PRAGMA wal_checkpoint(PASSIVE)');
      }
      this.#marker?.write(Number(this.#statement(FACTS).get()?.n ?? 0));
    } catch {
      // Busy or full: the next commit tries again; the mark only ever counts committed facts.
    }
  }

  #renew(): void {
    const now = this.#now();
    transaction(
      this.#db,
      () => {
        this.#db.prepare('UPDATE extract_workers SET seen_at = ? WHERE id = ?').run(now, this.worker);
        this.#db
          .prepare('UPDATE extract_claims SET expires = ? WHERE worker = ?')
          .run(now + this.#leaseMs, this.worker);
      },
      { relaxed: true },
    );
  }

  /**
   * A worker of this host whose process is gone (killed, crashed, the machine rebooted) holds
   * nothing: its claims run out now rather than at the end of its lease, so the next cron run
   * does not wait for them. A worker with this process's pid that this process did not open was
   * an earlier process's. Workers of other hosts cannot be asked: their leases decide.
   */
  #expireDeadHolders(now: number): void {
    const workers = this.#db
      .prepare(
        'SELECT id, host, pid FROM extract_workers WHERE finished_at IS NULL AND seen_at + lease_ms > ? AND id <> ?',
      )
      .all(now, this.worker);
    const expire = this.#db.prepare('UPDATE extract_claims SET expires = ? WHERE worker = ? AND expires > ?');
    const stop = this.#db.prepare('UPDATE extract_workers SET lease_ms = 0 WHERE id = ?');
    for (const w of workers) {
      const pid = Number(w.pid);
      const alive = pid === this.#self.pid ? OWN_WORKERS.has(String(w.id)) : this.#self.isAlive(pid);
      if (String(w.host) !== this.#self.host || alive) continue;
      expire.run(now, String(w.id), now);
      stop.run(String(w.id));
    }
  }
}
