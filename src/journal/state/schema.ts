import type { PoolClient } from 'pg';
import { ExtractError } from '../../errors.ts';
import { buildDocuments } from './postgres-documents.ts';

/**
 * The journal's tables in PostgreSQL, created on first use. Migrations only go forward: each
 * is applied once, in order, in the transaction that records its version; a database made
 * by a newer `extract` is refused rather than misread. A transaction-scoped advisory lock
 * serialises workers starting at once (and, unlike a session lock, survives a pooler).
 */

/** A migration: its SQL, then (for a table derived from the facts) what fills it from them. */
type Migration = { version: number; sql: string; build?: (client: PoolClient, where: string) => Promise<void> };

export const MIGRATIONS: ReadonlyArray<Migration> = [
  {
    version: 1,
    sql: `
      -- Every fact, in the order written. key is the document (target:sha256); body is the fact as the JSONL journal writes it.
      CREATE TABLE extract_facts (
        id bigserial PRIMARY KEY,
        key text,
        fact text NOT NULL,
        body jsonb NOT NULL,
        worker text,
        at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX extract_facts_key ON extract_facts (key, id);
      -- Who works on a document now. A claim is valid until expires; worker NULL means free.
      CREATE TABLE extract_claims (
        key text PRIMARY KEY,
        worker text,
        expires timestamptz NOT NULL,
        claimed_at timestamptz
      );
      CREATE INDEX extract_claims_worker ON extract_claims (worker);
      -- The workers that used this journal, for extract status.
      CREATE TABLE extract_workers (
        id text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        seen_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        lease_ms integer NOT NULL DEFAULT 30000
      );
    `,
  },
  {
    version: 2,
    sql: `
      -- What is known of each document (projection.ts): the replay of its facts, written in the
      -- transaction that adds each fact. state is the latest fact without its results (NULL:
      -- nothing known); results their JSON text; before what an unsent fact restores; last_fact
      -- and last_worker the latest fact's id and writer (a claim tells a concurrent outcome by them).
      CREATE TABLE extract_documents (
        key text PRIMARY KEY,
        state text,
        results text,
        before text,
        last_fact bigint NOT NULL,
        last_worker text
      );
    `,
    // A journal an older extract made: its facts replayed once, here, so no document is paid again.
    build: buildDocuments,
  },
];

export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** Any 64-bit number of our own: the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 7_215_553_401;

/** Runs inside a transaction the caller opened. Returns the versions applied. */
export async function migrate(client: PoolClient, where: string): Promise<number[]> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  await client.query(
    'CREATE TABLE IF NOT EXISTS extract_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  const { rows } = await client.query<{ v: number }>('SELECT coalesce(max(version), 0)::int AS v FROM extract_schema');
  const current = rows[0]?.v ?? 0;
  if (current > SCHEMA_VERSION) {
    throw new ExtractError(
      'usage',
      `the state database ${where} has schema version ${current}, newer than this extract knows (${SCHEMA_VERSION}): upgrade extract on this machine to share the batch`,
    );
  }
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    await client.query(m.sql);
    await m.build?.(client, where);
    await client.query('INSERT INTO extract_schema (version) VALUES ($1)', [m.version]);
    applied.push(m.version);
  }
  return applied;
}
