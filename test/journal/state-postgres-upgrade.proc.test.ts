import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factKey, stateKey, type JournalFact } from '../../src/journal/journal.ts';
import { openState, parseStateSpec } from '../../src/journal/state/index.ts';
import { MIGRATIONS } from '../../src/journal/state/schema.ts';
import { startPostgres, type PgServer } from '../helpers/postgres.ts';

/**
 * A PostgreSQL journal an older extract made (schema version 1: facts, claims, workers, no
 * projection) is upgraded at open: what is known of each document is built once from its facts,
 * so a claim after the upgrade knows every outcome (nothing is paid again), and a fact an older
 * worker writes after it (no projection row) is still seen.
 */

const at = '2026-01-01T00:00:00.000Z';
const common = (sha256: string) => ({ at, sha256, target: 't1', file: `${sha256}.pdf` });
const key = (sha256: string) => stateKey(sha256, 't1');
const log = () => {};

let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
}, 120_000);
afterAll(() => server?.stop());

async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function insertFact(client: pg.Client, fact: JournalFact, worker: string | null): Promise<void> {
  const k = factKey(fact) ?? null;
  await client.query('INSERT INTO extract_facts (key, fact, body, worker) VALUES ($1, $2, $3, $4)', [
    k,
    fact.fact,
    JSON.stringify(fact),
    worker,
  ]);
}

const completed: JournalFact = {
  fact: 'completed',
  ...common('paid'),
  route: 'upload',
  document_id: 'doc_1',
  page_count: 2,
  results: { total: null, name: 'x' },
};

describe('journal (postgres): a journal made by an older extract', () => {
  it('gets its projection built once at open; a claim then knows every outcome and nothing is sent again', async () => {
    const url = await server.database();
    // The database as version 1 left it: its tables and facts, recorded as schema version 1.
    await admin(url, async (client) => {
      await client.query(
        'CREATE TABLE extract_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      await client.query(MIGRATIONS.find((m) => m.version === 1)!.sql);
      await client.query('INSERT INTO extract_schema (version) VALUES (1)');
      await insertFact(client, { fact: 'sending', ...common('paid'), route: 'upload' }, 'old/1/a');
      await insertFact(
        client,
        { fact: 'submitted', ...common('paid'), route: 'upload', document_id: 'doc_1' },
        'old/1/a',
      );
      await insertFact(client, completed, 'old/1/a');
      await insertFact(client, { fact: 'sending', ...common('sent'), route: 'inline' }, 'old/1/a');
      await insertFact(client, { fact: 'sending', ...common('unsent'), route: 'inline' }, 'old/1/a');
      await insertFact(client, { fact: 'unsent', ...common('unsent'), route: 'inline' }, 'old/1/a');
    });

    const messages: string[] = [];
    const journal = await openState(parseStateSpec(url, '/'), {
      readOnly: false,
      leaseMs: 30_000,
      log: (_level, message) => messages.push(message),
    });
    try {
      expect(messages.join('\n')).toMatch(/journal tables upgraded \(schema version 2\)/);
      const rows = await admin(
        url,
        async (client) =>
          (await client.query('SELECT key, state IS NOT NULL AS known FROM extract_documents ORDER BY key')).rows,
      );
      expect(rows).toEqual([
        { key: key('paid'), known: true },
        { key: key('sent'), known: true },
        { key: key('unsent'), known: false },
      ]);

      const claims = await journal.claim([key('paid'), key('sent'), key('unsent'), key('new')], 4);
      const byKey = new Map(claims.map((c) => [c.key, c]));
      expect(byKey.get(key('paid'))?.known).toEqual(completed);
      expect(byKey.get(key('sent'))?.known?.fact).toBe('sending');
      expect(byKey.get(key('unsent'))?.known).toBeUndefined();
      expect(byKey.get(key('new'))?.known).toBeUndefined();

      // An older worker still running writes a fact without a projection row: the claim still sees it.
      await journal.release([key('new')]);
      await admin(url, (client) =>
        insertFact(client, { fact: 'sending', ...common('new'), route: 'inline' }, 'old/1/a'),
      );
      const [again] = await journal.claim([key('new')], 1);
      expect(again?.known?.fact).toBe('sending');
      expect(again?.concurrent).toBe(true);

      // The view a run plans from reads the same rows.
      const view = await journal.view();
      await view.known.prefetch?.([key('paid'), key('new')]);
      expect(view.known.get(key('paid'))).toEqual(completed);
      expect(view.known.get(key('new'))?.fact).toBe('sending');
    } finally {
      await journal.close();
    }
  });

  it('a fact and its document row are written in one transaction: every fact a worker writes is in the row', async () => {
    const url = await server.database();
    const journal = await openState(parseStateSpec(url, '/'), { readOnly: false, leaseMs: 30_000, log });
    try {
      await journal.claim([key('paid')], 1);
      await journal.append({ fact: 'sending', ...common('paid'), route: 'upload' });
      await journal.append(completed);
      const row = await admin(
        url,
        async (client) =>
          (
            await client.query(
              'SELECT d.state, d.last_fact = (SELECT max(id) FROM extract_facts) AS latest FROM extract_documents d',
            )
          ).rows,
      );
      expect(row).toHaveLength(1);
      expect(row[0].latest).toBe(true);
      expect(JSON.parse(row[0].state).fact).toBe('completed');
    } finally {
      await journal.close();
    }
  });
});
