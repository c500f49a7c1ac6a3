import type { PoolClient } from 'pg';
import type { JournalFact } from '../journal-facts.ts';
import { readFact } from '../journal-read.ts';
import { replayer, type KnownState } from '../journal.ts';
import { readState, splitState, step } from './projection.ts';
import type { LastFact } from './worker.ts';

/**
 * PostgreSQL's projection (projection.ts): `extract_documents`, one row per document, written in
 * the transaction that adds each of its facts, so a claim or a read-ahead reads one row per
 * document instead of replaying its facts. A row is trusted only when its last fact is the
 * document's latest in `extract_facts`; otherwise (a fact written by an older extract still
 * running while the database was upgraded) that document is replayed from its facts, as before.
 */

/** Where statements run: a client inside a transaction, or the pool (one statement, its own transaction). */
type Queryable = Pick<PoolClient, 'query'>;

/**
 * Writes one fact and its document's new row, inside the caller's transaction. A `sending`
 * whose claim is no longer this worker's writes nothing and answers false.
 */
export async function recordFact(
  client: Queryable,
  fact: JournalFact,
  key: string | null,
  worker: string,
  leaseMs: number,
): Promise<boolean> {
  if (fact.fact === 'sending' && key !== null) {
    // Only the holder may spend: the claim is checked (and its lease extended) in the same transaction.
    const held = await client.query(
      `UPDATE extract_claims SET expires = now() + $3 * interval '1 millisecond' WHERE key = $1 AND worker = $2`,
      [key, worker, leaseMs],
    );
    if (held.rowCount === 0) return false;
  }
  const insert = 'INSERT INTO extract_facts (key, fact, body, worker) VALUES ($1, $2, $3, $4) RETURNING id';
  const values = [key, fact.fact, JSON.stringify(fact), worker];
  if (key === null) {
    await client.query(insert, values);
    // A legacy reset forgets all before it; a parser or journal fact is about no document.
    if (fact.fact === 'reset')
      await client.query('UPDATE extract_documents SET state = NULL, results = NULL, before = NULL');
    return true;
  }
  // The document's row, locked: two workers' facts on one document are projected in the order of their ids.
  const { rows } = await client.query<{ state: string | null; results: string | null; before: string | null }>(
    `INSERT INTO extract_documents (key, last_fact) VALUES ($1, 0)
     ON CONFLICT (key) DO UPDATE SET key = excluded.key RETURNING state, results, before`,
    [key],
  );
  const row = rows[0];
  const doc = step({ state: readState(row?.state, row?.results), before: readState(row?.before, null) }, key, fact);
  const { state, results } = splitState(doc.state);
  await client.query(
    `WITH f AS (${insert})
     UPDATE extract_documents SET state = $5, results = $6, before = $7, last_fact = (SELECT id FROM f), last_worker = $4
      WHERE key = $1`,
    [...values, state, results, doc.before === undefined ? null : JSON.stringify(doc.before)],
  );
  return true;
}

export type KnownDocument = { state: KnownState | undefined; last: LastFact };

/** What is known of each of `keys` now: its row, or its facts replayed when the row is behind them. */
export async function readDocuments(
  client: Queryable,
  keys: readonly string[],
  where: string,
): Promise<Map<string, KnownDocument>> {
  const { rows } = await client.query<{
    key: string;
    state: string | null;
    results: string | null;
    last_fact: string | null;
    last_worker: string | null;
    newest: string | null;
  }>(
    `SELECT k AS key, d.state, d.results, d.last_fact, d.last_worker,
            (SELECT max(f.id) FROM extract_facts f WHERE f.key = k) AS newest
       FROM unnest($1::text[]) AS k LEFT JOIN extract_documents d ON d.key = k`,
    [[...keys]],
  );
  const out = new Map<string, KnownDocument>();
  const behind: string[] = [];
  for (const row of rows) {
    if (row.newest === null) out.set(row.key, { state: undefined, last: undefined });
    else if (row.last_fact === row.newest)
      out.set(row.key, {
        state: readState(row.state, row.results),
        last: { id: Number(row.last_fact), worker: row.last_worker },
      });
    else behind.push(row.key);
  }
  if (behind.length > 0) for (const [key, doc] of await replayDocuments(client, behind, where)) out.set(key, doc);
  return out;
}

async function replayDocuments(
  client: Queryable,
  keys: readonly string[],
  where: string,
): Promise<Map<string, KnownDocument>> {
  const facts = await client.query<{ key: string; id: string; body: unknown; worker: string | null }>(
    'SELECT key, id, body, worker FROM extract_facts WHERE key = ANY($1::text[]) ORDER BY id',
    [[...keys]],
  );
  const replay = replayer();
  const last = new Map<string, LastFact>();
  for (const row of facts.rows) {
    replay.apply(readFact(row.body, where));
    last.set(row.key, { id: Number(row.id), worker: row.worker });
  }
  return new Map(keys.map((key) => [key, { state: replay.known.get(key), last: last.get(key) }]));
}

/**
 * The projection of a journal an older extract made: every fact replayed once, in order, and a
 * row written per document (run by the migration that creates the table, in its transaction).
 */
export async function buildDocuments(client: PoolClient, where: string): Promise<void> {
  const { rows } = await client.query<{ key: string | null; id: string; body: unknown; worker: string | null }>(
    'SELECT key, id, body, worker FROM extract_facts ORDER BY id',
  );
  const replay = replayer();
  const last = new Map<string, { id: string; worker: string | null }>();
  for (const row of rows) {
    replay.apply(readFact(row.body, where));
    if (row.key !== null) last.set(row.key, { id: row.id, worker: row.worker });
  }
  const columns: string[][] = [[], [], [], [], [], []];
  const rowsOf = [...last];
  for (let i = 0; i < rowsOf.length; i += 1_000) {
    for (const c of columns) c.length = 0;
    for (const [key, fact] of rowsOf.slice(i, i + 1_000)) {
      const { state, results } = splitState(replay.known.get(key));
      const before = replay.before.get(key);
      columns[0]!.push(key);
      columns[1]!.push(state as string);
      columns[2]!.push(results as string);
      columns[3]!.push(before === undefined ? (null as unknown as string) : JSON.stringify(before));
      columns[4]!.push(fact.id);
      columns[5]!.push(fact.worker as string);
    }
    await client.query(
      `INSERT INTO extract_documents (key, state, results, before, last_fact, last_worker)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[])`,
      columns,
    );
  }
}
