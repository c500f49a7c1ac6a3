import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { PG_PASSWORD, type PgServer, startPostgres } from '../helpers/postgres.ts';
import { it, ledger, reservesBySha } from './batch-helpers.ts';
import { dropDir, dropInvoices, jsonLinesOf, startWatch, until } from './watch-helpers.ts';

/**
 * Watchers on two "machines" (each its own working directory, state home and output) share one
 * drop folder through a PostgreSQL journal, against a service that ignores Idempotency-Key.
 */

let pg: PgServer;
beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(() => pg?.stop());

describe('extract watch on several machines', () => {
  it('two watchers of one folder through postgres://: each document extracted and charged once', async ({
    serve,
    spawnCli,
  }) => {
    const { url } = await serve({ idempotency_key: false, processing: { ms_per_page: 100, concurrency: 4 } });
    const drop = dropDir();
    const folder = join(drop, 'in');
    const state = await pg.database();
    const machines = [tempDir('extract-machine-a-'), tempDir('extract-machine-b-')];
    const watchers = await Promise.all(
      machines.map((cwd) =>
        startWatch(spawnCli, cwd, url, [folder, '--state', state, '-o', 'out.jsonl', '--settle', '1s']),
      ),
    );
    const files = (await dropInvoices(drop, 20)).map((f) => join(drop, f));
    const completed = (): Set<string> =>
      new Set(
        machines
          .flatMap((cwd) => jsonLinesOf(join(cwd, 'out.jsonl')))
          .filter((r) => r.status === 'completed')
          .map((r) => String(r.file)),
      );
    await until(() => completed().size === 20, 'all 20 completed', watchers[0]);
    expect([...completed()].sort()).toEqual(files.sort());
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(20);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
    expect((await ledger(url)).entries.filter((e) => e.kind === 'reserve')).toHaveLength(20);
    for (const w of watchers) expect(w.stderr()).not.toContain(PG_PASSWORD);
    const sent = watchers.map((w) => (w.stderr().match(/: completed \(doc_/g) ?? []).length);
    process.stderr.write(`watch: two watchers through postgres:// completed ${sent.join(' + ')} of 20 documents\n`);
  }, 300_000);
});
