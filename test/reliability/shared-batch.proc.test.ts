import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { extract, readJsonLines, serveForFile } from '../e2e/batch-helpers.ts';
import { cleanEnv, tempDir } from '../helpers/cli.ts';
import { PG_PASSWORD, startPostgres, type PgServer } from '../helpers/postgres.ts';
import { chargesBySha, makeCorpus, readReport, type Corpus } from './helpers.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Many workers, one batch, through PostgreSQL (a real server, test/helpers/postgres.ts) and a
 * real `extract serve`: three worker processes share the batch through PgBouncer in transaction
 * mode and each document is charged once; a worker SIGKILLed mid-batch has its documents
 * finished by the others without a second charge; the database restarted mid-batch is ridden
 * out. Every worker's report and -o cover the whole batch.
 */

const KEY = DEFAULT_CONFIG.parsers[0]!.api_keys[0]!;
let pgServer: PgServer;
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => pgServer?.stop());

/**
 * One `extract serve` for the file (each test reads only its own ledger entries): a serve's start
 * cost more CPU than most of these tests' workers. Its documents take 300 ms to process, so that
 * a worker killed or paused just after it submitted still has documents in flight (the slowest
 * the tests needed; the others ran at 100-200 ms, which only makes their batches shorter).
 */
const serveUrl = serveForFile({ credits: 1_000_000, processing: { ms_per_page: 300, concurrency: 8 } });

type Setup = { root: string; corpus: Corpus; url: string; state: string };

let corpora = 0;

/** A corpus of documents no other test of the file sends (distinct contents), and a fresh database. */
async function setup(n: number): Promise<Setup> {
  const root = tempDir('extract-shared-');
  const corpus = await makeCorpus(root, n, 'shared', `corpus ${++corpora}`);
  return { root, corpus, url: serveUrl(), state: await pgServer.database() };
}

function workerArgs(s: Setup, i: number, extra: string[] = []): string[] {
  return [
    s.corpus.dir,
    '--state',
    s.state,
    '--inline-max',
    String(s.corpus.inlineMax),
    '-c',
    '2',
    '--poll-interval',
    '100ms',
    '--poll-max-interval',
    '300ms',
    '--lease',
    '2s',
    '--no-progress',
    '-o',
    join(s.root, `out-${i}.jsonl`),
    '--report',
    join(s.root, `report-${i}.json`),
    ...extra,
  ];
}

function workerCwd(s: Setup, i: number): string {
  const cwd = join(s.root, `worker-${i}`);
  mkdirSync(cwd, { recursive: true });
  return cwd;
}

/** Every document of the corpus completed in `report`, whoever completed it. */
function expectWholeBatch(s: Setup, i: number): void {
  const report = readReport(join(s.root, `report-${i}.json`));
  expect(report.documents.map((d) => d.file.split('/').pop()).sort()).toEqual(s.corpus.names);
  expect(
    report.documents.every((d) => d.status === 'completed'),
    `worker ${i}: ${JSON.stringify(report.documents.filter((d) => d.status !== 'completed'))}`,
  ).toBe(true);
  const records = readJsonLines(readFileSync(join(s.root, `out-${i}.jsonl`), 'utf8'));
  expect(records).toHaveLength(s.corpus.names.length);
}

/** The test's ledger: exactly the documents of `setups`, each reserved once and charged one page. */
async function expectChargedOnce(...setups: Setup[]): Promise<void> {
  const { net, reserves } = await chargesBySha(setups[0]!.url);
  const shas = setups.flatMap((s) =>
    s.corpus.names.map((n) =>
      createHash('sha256')
        .update(readFileSync(join(s.corpus.dir, n)))
        .digest('hex'),
    ),
  );
  expect([...net.keys()].sort()).toEqual([...shas].sort());
  expect([...net.values()].every((p) => p === 1)).toBe(true);
  expect([...reserves.values()].every((r) => r === 1)).toBe(true);
}

describe('many workers, one batch (PostgreSQL)', () => {
  it('three workers share a batch through PgBouncer in transaction mode (no session state): each document completed by one of them and charged once; every report covers the batch', async () => {
    // One batch for both claims (sharing, and sharing with no session state): the direct
    // connection's sharing is held by the tests below, whose workers connect without PgBouncer.
    const s = await setup(30);
    const db = new URL(s.state).pathname.slice(1);
    const bouncer = await pgServer.bouncer(db);
    const env = cleanEnv({ EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: s.url });
    const runs = await Promise.all(
      [0, 1, 2].map((i) =>
        extract(
          workerCwd(s, i),
          s.url,
          workerArgs(s, i).filter((a, k, all) => a !== '--state' && all[k - 1] !== '--state'),
          { env: { ...env, EXTRACT_STATE_URL: bouncer, EXTRACT_CONFIG_DIR: join(s.root, `cfg-${i}`) } },
        ),
      ),
    );
    expect(
      runs.map((r) => r.exitCode),
      runs.map((r) => r.stderr).join('\n---\n'),
    ).toEqual([0, 0, 0]);
    expect(runs[0]!.stderr).toMatch(
      new RegExp(`sharing the batch through postgres://\\*\\*\\*@127\\.0\\.0\\.1:(?!${pgServer.port})\\d+/`),
    );
    const reports = [0, 1, 2].map((i) => readReport(join(s.root, `report-${i}.json`)));
    const mine = reports.map((r) => r.documents.filter((d) => d.outcome === 'completed').length);
    expect(mine.reduce((a, b) => a + b, 0)).toBe(30); // each document completed by exactly one worker
    expect(
      mine.every((n) => n > 0),
      `completed per worker: ${mine.join(', ')}`,
    ).toBe(true); // the work divides
    for (const i of [0, 1, 2]) expectWholeBatch(s, i);
    await expectChargedOnce(s);
    console.log(`shared batch through PgBouncer: 30 documents completed per worker ${mine.join(' / ')}; 30 charges`);

    // extract status (straight to the server) shows the batch: every document completed, by three
    // workers; no password. --fresh on a shared journal is refused before the journal is opened.
    const [status, text, fresh] = await Promise.all([
      extract(s.root, s.url, ['status', '--state', s.state, '--json'], { env }),
      extract(s.root, s.url, ['status', '--state', s.state], { env }),
      extract(workerCwd(s, 3), s.url, workerArgs(s, 3, ['--fresh']), { env }),
    ]);
    expect(status.exitCode, status.stderr).toBe(0);
    const view = JSON.parse(status.stdout) as {
      documents: number;
      completed: number;
      pages_charged: number;
      workers: Array<{ completed: number }>;
    };
    expect(view).toMatchObject({ documents: 30, completed: 30, pages_charged: 30 });
    expect(view.workers.map((w) => w.completed).sort()).toEqual([...mine].sort());
    expect(text.stdout).toMatch(/30 documents: 30 completed/);
    expect(fresh.exitCode).toBe(2);
    expect(fresh.stderr).toMatch(/--fresh with a shared journal/);
    for (const out of [
      status.stdout,
      status.stderr,
      text.stdout,
      text.stderr,
      ...runs.flatMap((r) => [r.stdout, r.stderr]),
    ])
      expect(out).not.toContain(PG_PASSWORD);

    // A rerun of the batch from another machine sends nothing.
    const rerun = await extract(workerCwd(s, 3), s.url, workerArgs(s, 3), {
      env: { ...env, EXTRACT_CONFIG_DIR: join(s.root, 'cfg-3') },
    });
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(readReport(join(s.root, 'report-3.json'))).toMatchObject({ skipped: 30, completed: 0 });
    await expectChargedOnce(s);
  }, 180_000);

  it('a worker SIGKILLed mid-batch: the others take its documents over (polled, never sent again) and finish the batch, each document charged once', async ({
    spawnCli,
  }) => {
    const s = await setup(20);
    const env = { EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: s.url };
    // The victim uploads (its documents sit submitted while they process) and is killed once it holds some.
    const victim = spawnCli([...workerArgs(s, 0, ['--route', 'upload', '-v'])], {
      env: { ...env, EXTRACT_CONFIG_DIR: join(s.root, 'cfg-0') },
      cwd: workerCwd(s, 0),
    });
    await victim.waitFor(/submitted as doc_[\s\S]*submitted as doc_/, 60_000);
    const others = [1, 2].map((i) =>
      extract(workerCwd(s, i), s.url, workerArgs(s, i), {
        env: cleanEnv({ ...env, EXTRACT_CONFIG_DIR: join(s.root, `cfg-${i}`) }),
      }),
    );
    victim.child.kill('SIGKILL');
    await victim.child;
    const runs = await Promise.all(others);
    const stderr = runs.map((r) => r.stderr).join('\n---\n');
    expect(stderr).toMatch(/taken over from worker/);
    const taken = (stderr.match(/taken over from worker/g) ?? []).length;

    // A send the victim had in flight at the kill is visible (not resent silently); a rerun with --retry-failed converges.
    if (runs.some((r) => r.exitCode !== 0)) {
      expect(
        runs.map((r) => r.exitCode).every((c) => c === 0 || c === 1),
        stderr,
      ).toBe(true);
      const failures = [1, 2].flatMap((i) =>
        readReport(join(s.root, `report-${i}.json`)).documents.filter((d) => d.status !== 'completed'),
      );
      expect(failures.length).toBeGreaterThan(0);
      for (const d of failures) expect(d.error).toMatch(/may have been charged/);
      const rerun = await extract(workerCwd(s, 1), s.url, workerArgs(s, 1, ['--retry-failed']), {
        env: cleanEnv({ ...env, EXTRACT_CONFIG_DIR: join(s.root, 'cfg-1') }),
      });
      expect(rerun.exitCode, rerun.stderr).toBe(0);
      expectWholeBatch(s, 1);
    } else {
      for (const i of [1, 2]) expectWholeBatch(s, i);
    }
    await expectChargedOnce(s);
    // extract status: the dead worker is gone (never finished, no longer seen); the others finished.
    const status = await extract(s.root, s.url, ['status', '--state', s.state, '--json'], { env: cleanEnv(env) });
    const workers = (JSON.parse(status.stdout) as { workers: Array<{ finished: string | null; alive: boolean }> })
      .workers;
    expect(workers.filter((w) => w.finished === null && !w.alive)).toHaveLength(1);
    expect(workers.filter((w) => w.finished !== null)).toHaveLength(workers.length - 1);
    console.log(
      `SIGKILLed worker: ${taken} documents taken over by the others; exits ${runs.map((r) => r.exitCode).join(', ')}; 20 documents charged once each`,
    );
  }, 180_000);

  it('the database down mid-batch: workers told --state-wait 2s stop with exit 6 and a clear message, the others wait for it and go on; reruns converge, every document charged once', async ({
    spawnCli,
  }) => {
    // One crash of the server for two batches (its own database each): the riders, with the
    // default --state-wait (60 s), and the stoppers, with 2 s. Two workers of two slots each.
    const riders = await setup(24);
    const stoppers = await setup(24);
    const env = { EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: riders.url };
    const start = (s: Setup, extra: string[]) =>
      [0, 1].map((i) =>
        spawnCli(workerArgs(s, i, extra), {
          env: { ...env, EXTRACT_CONFIG_DIR: join(s.root, `cfg-${i}`) },
          cwd: workerCwd(s, i),
        }),
      );
    const riding = start(riders, []);
    const stopping = start(stoppers, ['--state-wait', '2s']);
    await Promise.all([riding, stopping].map((ws) => ws[0]!.waitFor(/\[\d+\/\d+\] .*completed/, 60_000)));
    pgServer.crash();
    // Down until the stoppers have stopped (2 s and more): the riders wait through all of it.
    const stopped = await Promise.all(stopping.map((w) => w.child.then((r) => r.exitCode)));
    pgServer.start();
    const rode = await Promise.all(riding.map((w) => w.child.then((r) => r.exitCode)));

    const stopperErr = stopping.map((w) => w.stderr()).join('\n---\n');
    expect(stopped, stopperErr).toEqual([6, 6]);
    expect(stopperErr).toMatch(
      /the state database postgres:\/\/\*\*\*@127\.0\.0\.1:\d+\/\w+ has been unreachable for \d+ s .*: stopped; nothing recorded is lost, rerun the same command when it is back/,
    );
    expect(stopperErr).not.toMatch(/unexpected error|at .*\.js:\d+/); // a message, not a stack
    const riderErr = riding.map((w) => w.stderr()).join('\n---\n');
    expect(riderErr).toMatch(/state database is unreachable/);
    for (const out of [stopperErr, riderErr]) expect(out).not.toContain(PG_PASSWORD);

    const rerun = (s: Setup) =>
      extract(workerCwd(s, 0), s.url, workerArgs(s, 0, ['--retry-failed']), {
        env: cleanEnv({ ...env, EXTRACT_CONFIG_DIR: join(s.root, 'cfg-0') }),
      });
    const again = await rerun(stoppers);
    expect(again.exitCode, again.stderr).toBe(0);
    expectWholeBatch(stoppers, 0);
    if (rode.some((c) => c !== 0)) {
      // A rider that gave up says so clearly; a rerun converges without paying twice.
      expect(riderErr).toMatch(/unreachable for \d+ s|rerun/);
      const last = await rerun(riders);
      expect(last.exitCode, last.stderr).toBe(0);
      expectWholeBatch(riders, 0);
    } else {
      for (const i of [0, 1]) expectWholeBatch(riders, i);
    }
    await expectChargedOnce(riders, stoppers);
    console.log(`database down mid-batch: riders exit ${rode.join(', ')}; stoppers exit ${stopped.join(', ')}`);
  }, 180_000);

  it('a worker paused past its lease (SIGSTOP) loses its documents to another and, woken, sends none of them again', async ({
    spawnCli,
  }) => {
    const s = await setup(20);
    const env = { EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: s.url };
    const sleeper = spawnCli(workerArgs(s, 0, ['--lease', '1s', '-c', '4']), {
      env: { ...env, EXTRACT_CONFIG_DIR: join(s.root, 'cfg-0') },
      cwd: workerCwd(s, 0),
    });
    await sleeper.waitFor(/\[\d+\/\d+\] .*completed/, 60_000);
    sleeper.child.kill('SIGSTOP');
    const other = await extract(workerCwd(s, 1), s.url, workerArgs(s, 1, ['--lease', '1s']), {
      env: cleanEnv({ ...env, EXTRACT_CONFIG_DIR: join(s.root, 'cfg-1') }),
    });
    sleeper.child.kill('SIGCONT');
    const sleeperExit = (await sleeper.child).exitCode;
    expect(other.stderr).toMatch(/taken over from worker/);
    // Woken, the sleeper may finish what it had in flight, but sends nothing the other took.
    expect([0, 1]).toContain(other.exitCode);
    expect([0, 1]).toContain(sleeperExit);
    // Nothing sent twice. A document the sleeper had claimed but not yet sent when it was paused
    // may be sent by neither (the other found its lease still live; the sleeper, woken past its
    // lease, will not risk it): pending, exit 1, and the rerun below sends it (seen once at load 22).
    const { reserves } = await chargesBySha(s.url);
    expect(reserves.size).toBeLessThanOrEqual(20);
    if (reserves.size < 20) expect((other.exitCode ?? 1) + (sleeperExit ?? 1)).toBeGreaterThan(0);
    expect(
      [...reserves.values()].every((r) => r === 1),
      JSON.stringify([...reserves.values()]),
    ).toBe(true);
    if (other.exitCode !== 0 || sleeperExit !== 0) {
      const rerun = await extract(workerCwd(s, 1), s.url, workerArgs(s, 1, ['--retry-failed']), {
        env: cleanEnv({ ...env, EXTRACT_CONFIG_DIR: join(s.root, 'cfg-1') }),
      });
      expect(rerun.exitCode, rerun.stderr).toBe(0);
    }
    await expectChargedOnce(s);
    const refused = (sleeper.stderr().match(/another worker took it over/g) ?? []).length;
    console.log(
      `paused worker: exits ${sleeperExit} (woken) and ${other.exitCode} (the other); ${refused} claimed documents refused to the woken worker; 20 documents, 1 reserve each`,
    );
  }, 180_000);

  it('a journal an older extract made (no projection table) is upgraded at the next run: nothing is sent or charged again', async () => {
    const s = await setup(6);
    const env = cleanEnv({ EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: s.url });
    const first = await extract(workerCwd(s, 0), s.url, workerArgs(s, 0), { env });
    expect(first.exitCode, first.stderr).toBe(0);
    // The database as schema version 1 left it: the same facts, claims and workers, no projection.
    const admin = new pg.Client({ connectionString: s.state });
    await admin.connect();
    try {
      await admin.query('DROP TABLE extract_documents');
      await admin.query('DELETE FROM extract_schema WHERE version > 1');
    } finally {
      await admin.end();
    }
    const rerun = await extract(workerCwd(s, 1), s.url, workerArgs(s, 1, ['-v']), { env });
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/journal tables upgraded \(schema version 2\)/);
    expectWholeBatch(s, 1);
    await expectChargedOnce(s);
  }, 120_000);
});
