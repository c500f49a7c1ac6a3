import { hostname } from 'node:os';
import pg from 'pg';
import type { JournalFact } from '../journal-facts.ts';
import { readFact } from '../journal-read.ts';
import {
  factKey,
  replayer,
  type JournalView,
  type KnownLookup,
  type KnownState,
  type ParserFact,
  type Replay,
} from '../journal.ts';
import {
  ClaimLostError,
  logMigrations,
  type Claim,
  type History,
  type OpenStateOptions,
  type StateJournal,
  type WorkerInfo,
} from './journal-state.ts';
import { PREFETCH_CHUNK } from './projection.ts';
import { claimOf, LeaseKeeper, leave, workerName } from './worker.ts';
import { memoryState } from './memory.ts';
import { commitGroups, Refused } from './group-commit.ts';
import { Db } from './postgres-db.ts';
import { readDocuments, recordFact } from './postgres-documents.ts';
import { migrate } from './schema.ts';
import { redactUrl } from '../../redact.ts';

/**
 * The PostgreSQL backend: the journal's facts in a table many workers share, and a claim
 * per document with a lease the holder renews. Every operation is one statement or one
 * short transaction on a pooled connection, and nothing lives in a session (no prepared
 * statement names, no session locks, no SET), so it works through PgBouncer in transaction
 * mode. Lease times are the database's clock (now()), so the workers' clocks may differ.
 *
 * A worker that dies stops renewing; when its lease runs out, its documents are free to
 * claim. The one fact that spends money, `sending`, is written only while the claim is
 * still this worker's (checked in the same statement), so two workers never send one
 * document; every other fact is true whoever writes it, and is always written.
 */

export async function openPostgresState(url: string, options: OpenStateOptions): Promise<StateJournal> {
  const where = redactUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 10_000,
    application_name: 'extract',
  });
  // An idle connection dropped (the server restarted): the next query connects again.
  pool.on('error', () => {});
  const db = new Db(pool, where, options);
  try {
    if (options.readOnly) {
      // A dry run or `extract status` on a database no worker has used yet: an empty journal, nothing created.
      const { rows } = await db.query<{ made: boolean }>(
        'read the journal',
        `SELECT to_regclass('extract_facts') IS NOT NULL AS made`,
      );
      if (rows[0]?.made !== true) {
        await pool.end().catch(() => undefined);
        return memoryState(where);
      }
    }
    await db.transaction('create the journal tables', async (client) => {
      logMigrations(options.log, where, await migrate(client, where));
    });
    if (options.readOnly) return new PostgresState(db, where, 'dry-run', options, 0);
    const worker = workerName(hostname(), process.pid);
    await db.query(
      'register this worker',
      'INSERT INTO extract_workers (id, host, pid, lease_ms) VALUES ($1, $2, $3, $4)',
      [worker, hostname(), process.pid, Math.round(options.leaseMs)],
    );
    return new PostgresState(db, where, worker, options, options.leaseMs);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}

class PostgresState implements StateJournal {
  readonly shared = true;
  readonly #db: Db;
  readonly #leaseMs: number;
  readonly #lost = new Set<string>();
  /** Facts waiting for the next group's transaction. */
  readonly #facts = commitGroups<JournalFact, undefined>((group) => this.#commit(group));
  readonly #lease: LeaseKeeper;
  /** The highest fact id of the replay: facts above it were written while this run went on. */
  #watermark = 0;

  readonly where: string;
  readonly worker: string;
  readonly options: OpenStateOptions;

  constructor(db: Db, where: string, worker: string, options: OpenStateOptions, leaseMs: number) {
    this.where = where;
    this.worker = worker;
    this.options = options;
    this.#db = db;
    this.#leaseMs = leaseMs;
    this.#lease = new LeaseKeeper(where, options, leaseMs, () =>
      db.once(
        `WITH w AS (UPDATE extract_workers SET seen_at = now() WHERE id = $1)
         UPDATE extract_claims SET expires = now() + $2 * interval '1 millisecond' WHERE worker = $1`,
        [worker, leaseMs],
      ),
    );
  }

  async replay(): Promise<Replay> {
    const { rows } = await this.#db.query<{ id: string; body: unknown }>(
      'read the journal',
      'SELECT id, body FROM extract_facts ORDER BY id',
    );
    const replay = replayer();
    const skipped = 0;
    for (const row of rows) {
      this.#watermark = Math.max(this.#watermark, Number(row.id));
      replay.apply(readFact(row.body, this.where));
    }
    return { known: replay.known, parsers: replay.parsers, skipped, torn: false };
  }

  /**
   * What a worker starts from, without replaying every fact: the watermark, the parser facts
   * (few), the targets (a skip scan of the facts' key index: one probe per target), and the
   * documents read ahead by key (`prefetch`, a thousand a query, each replayed from its own
   * facts). A document not read ahead is answered as unknown: the claim, which reads it in
   * its transaction, decides before anything is sent.
   */
  async view(): Promise<JournalView> {
    const { rows } = await this.#db.query<{ id: string | null }>(
      'read the journal',
      'SELECT max(id) AS id FROM extract_facts',
    );
    this.#watermark = Math.max(this.#watermark, Number(rows[0]?.id ?? 0));
    const parsers = new Map<string, ParserFact>();
    const found = await this.#db.query<{ body: unknown }>(
      'read the journal',
      'SELECT body FROM extract_facts WHERE key IS NULL ORDER BY id',
    );
    for (const row of found.rows) {
      const fact = readFact(row.body, this.where);
      if (fact.fact === 'parser') parsers.set(fact.target, fact);
    }
    const targets = await this.#db.query<{ target: string }>(
      'read the journal',
      `WITH RECURSIVE t(key) AS (
         SELECT min(key) FROM extract_facts WHERE key IS NOT NULL
         UNION ALL
         SELECT (SELECT min(key) FROM extract_facts WHERE key > split_part(t.key, ':', 1) || ';') FROM t WHERE t.key IS NOT NULL)
       SELECT split_part(key, ':', 1) AS target FROM t WHERE key IS NOT NULL`,
    );
    const known = new Set(targets.rows.map((r) => r.target));
    const ahead = new Map<string, KnownState | undefined>();
    const lookups: KnownLookup = {
      get: (key) => {
        const state = ahead.get(key);
        ahead.delete(key);
        return state;
      },
      // Never asked of a shared journal (no file is hashed while it is sent): "probably known" hashes first.
      names: () => true,
      targets: () => known,
      prefetch: async (keys) => {
        for (let i = 0; i < keys.length; i += PREFETCH_CHUNK) {
          const chunk = [...new Set(keys.slice(i, i + PREFETCH_CHUNK))];
          const docs = await this.#db.read('read the journal', (pool) => readDocuments(pool, chunk, this.where));
          for (const key of chunk) ahead.set(key, docs.get(key)?.state);
        }
      },
    };
    return { known: lookups, parsers, skipped: 0, torn: false };
  }

  /**
   * Group commit (group-commit.ts): the facts appended in one turn of the event loop go in one
   * transaction, each with its document's row; a `sending` whose claim was lost is refused alone
   * (nothing of it written), any other failure refuses the whole group, none of which was written.
   */
  append(fact: JournalFact): Promise<void> {
    return this.#facts.add(fact);
  }

  async #commit(group: JournalFact[]): Promise<Array<Refused | undefined>> {
    // Documents' rows locked in key order (a fact's own document's order kept): two workers'
    // groups over the same documents queue rather than deadlock.
    const order = group.some((f) => f.fact === 'reset') ? group.map((_, i) => i) : byKey(group);
    const answers = await this.#db.transaction('record a fact', async (client) => {
      const out: Array<Refused | undefined> = [];
      for (const i of order) {
        const fact = group[i]!;
        const key = factKey(fact) ?? null;
        const held = await recordFact(client, fact, key, this.worker, this.#leaseMs);
        out[i] = !held && key !== null ? new Refused(new ClaimLostError(key)) : undefined;
      }
      return out;
    });
    // Only once committed: an attempt the outage wait made again may have found the claim held.
    for (const answer of answers) if (answer?.error instanceof ClaimLostError) this.#lost.add(answer.error.key);
    return answers;
  }

  async claim(keys: readonly string[], max: number): Promise<Claim[]> {
    if (keys.length === 0 || max <= 0) return [];
    // One order for every worker, so that two inserting overlapping keys cannot deadlock.
    const sorted = [...new Set(keys)].sort();
    // The rows first, in a statement of their own (the server commits it whatever the client does):
    // inside the claim's transaction, a worker paused between its INSERT and its COMMIT (SIGSTOP, a
    // frozen VM) would hold those new rows, and another worker's INSERT of the same keys would wait
    // for it forever. The claim itself only skips rows another holds (SKIP LOCKED).
    await this.#db.query(
      'claim documents',
      `INSERT INTO extract_claims (key, worker, expires) SELECT k, NULL, '-infinity' FROM unnest($1::text[]) AS k ON CONFLICT (key) DO NOTHING`,
      [sorted],
    );
    return this.#db.transaction('claim documents', async (client) => {
      const won = await client.query<{ key: string; taken_from: string | null }>(
        `WITH free AS (
           SELECT key, worker AS before FROM extract_claims
            WHERE key = ANY($1::text[])
              AND (worker IS NULL OR worker = $2
                   -- A lease that ran out while the server was down is no sign of a dead worker: after a
                   -- restart, holders get one lease to renew before their documents are taken over.
                   OR expires < now() AND pg_postmaster_start_time() < now() - $4 * interval '1 millisecond')
            ORDER BY key LIMIT $3 FOR UPDATE SKIP LOCKED)
         UPDATE extract_claims c SET worker = $2, expires = now() + $4 * interval '1 millisecond', claimed_at = now()
           FROM free WHERE c.key = free.key
         RETURNING c.key, CASE WHEN free.before IS DISTINCT FROM $2 THEN free.before END AS taken_from`,
        [sorted, this.worker, Math.min(Math.floor(max), sorted.length), this.#leaseMs],
      );
      if (won.rows.length === 0) return [];
      const docs = await readDocuments(
        client,
        won.rows.map((r) => r.key),
        this.where,
      );
      const self = { worker: this.worker, watermark: this.#watermark };
      return won.rows.map((r) => {
        const doc = docs.get(r.key);
        return claimOf(r.key, doc?.state, doc?.last, self, r.taken_from);
      });
    });
  }

  async release(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#db.query(
      'release documents',
      `UPDATE extract_claims SET worker = NULL, expires = '-infinity' WHERE key = ANY($1::text[]) AND worker = $2`,
      [[...keys], this.worker],
    );
  }

  lost(key: string): boolean {
    return this.#lost.has(key);
  }

  async holders(keys: readonly string[]): Promise<Map<string, string>> {
    const { rows } = await this.#db.query<{ key: string; worker: string }>(
      'read the claims',
      'SELECT key, worker FROM extract_claims WHERE key = ANY($1::text[]) AND worker IS NOT NULL AND expires > now()',
      [[...keys]],
    );
    return new Map(rows.map((r) => [r.key, r.worker]));
  }

  async history(): Promise<History> {
    const facts = await this.#db.query<{ body: unknown; worker: string | null }>(
      'read the journal',
      'SELECT body, worker FROM extract_facts ORDER BY id',
    );
    const workers = await this.#db.query<WorkerInfo>(
      'read the workers',
      `SELECT w.id, w.host, w.pid, to_json(w.started_at)#>>'{}' AS started, to_json(w.seen_at)#>>'{}' AS seen, to_json(w.finished_at)#>>'{}' AS finished,
              (w.finished_at IS NULL AND w.seen_at > now() - w.lease_ms * interval '1 millisecond') AS alive,
              (SELECT count(*)::int FROM extract_claims c WHERE c.worker = w.id AND c.expires > now()) AS holding
         FROM extract_workers w ORDER BY w.started_at`,
    );
    const out: History = { facts: [], workers: workers.rows, skipped: 0 };
    for (const row of facts.rows) {
      out.facts.push({ fact: readFact(row.body, this.where), worker: row.worker });
    }
    return out;
  }

  async close(): Promise<void> {
    // What was appended is written before the pool ends (each append's caller hears how it went).
    await this.#facts.settle();
    return leave(
      this.#lease,
      this.#leaseMs > 0,
      () =>
        this.#db.once(
          `WITH w AS (UPDATE extract_workers SET finished_at = now(), seen_at = now() WHERE id = $1)
           UPDATE extract_claims SET worker = NULL, expires = '-infinity' WHERE worker = $1`,
          [this.worker],
        ),
      () => this.#db.end(),
    );
  }
}

/** The group's indexes in key order, stable: each document's facts keep the order they were appended in. */
function byKey(group: readonly JournalFact[]): number[] {
  const keys = group.map((f) => factKey(f) ?? '');
  return group.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
}
