import { defaultJournalIn } from '../helpers/journal.ts';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { extract } from '../e2e/batch-helpers.ts';
import { type CliProcess, cleanEnv, type ServeProcess, stateHomeIn, tempDir } from '../helpers/cli.ts';
import { PG_PASSWORD, startPostgres } from '../helpers/postgres.ts';
import { makeCorpus, writeServeConfig } from './helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Secrets never printed: the client (successes, failures, a 401 with a wrong key, --report,
 * every -o format, -v request logs, the journal), serve's request and delivery lines, and
 * listen's logs are all scanned for the API keys and the webhook tokens. Servers bind
 * loopback by default and warn when told otherwise.
 *
 * The client's config file is created 0600: test/config/store.test.ts ("config: the file is
 * created with mode 0600", and back to 0600 after a chmod) holds that; not repeated here.
 */

const API_KEY = 'ext_SECRET_api_key_reliability_7f3a9c21';
const WRONG_KEY = 'ext_WRONG_api_key_reliability_0b1d2e33';
const BEARER = 'whk_BEARER_secret_reliability_5e6f7a';
const WRONG_BEARER = 'whk_WRONG_bearer_reliability_99aa';
const BASIC_USER = 'hookuser';
const BASIC_PASSWORD = 'BASIC_password_reliability_9a8b7c';
const WRONG_PASSWORD = 'WRONG_password_reliability_1234';
/** The scan's corpus: both routes (every other one over --inline-max), and an unreadable one. */
const DOCS = 6;
const WRONG_PG_PASSWORD = 'WRONG_pg_password_reliability_4242';
const SECRETS = [
  API_KEY,
  WRONG_KEY,
  BEARER,
  WRONG_BEARER,
  BASIC_PASSWORD,
  WRONG_PASSWORD,
  Buffer.from(`${BASIC_USER}:${BASIC_PASSWORD}`).toString('base64'),
  Buffer.from(`${BASIC_USER}:${WRONG_PASSWORD}`).toString('base64'),
];

/** Every file under `dir`, recursively, with its bytes. */
function filesUnder(dir: string): Array<{ path: string; bytes: Buffer }> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

describe('security', () => {
  // The scan's receivers and serve, started once: they also bind the default address, which the
  // loopback test reads (so it starts only the two told to bind 0.0.0.0).
  const scan = { work: '', listenA: '', listenB: '' };
  let corpus: Awaited<ReturnType<typeof makeCorpus>>;
  let bearer: CliProcess;
  let basic: CliProcess;
  let server: ServeProcess;
  let urlA = '';
  let urlB = '';
  let startup = 0;
  it.beforeAll(async ({ fileTempDir, fileSpawn }) => {
    const root = fileTempDir('extract-secrets-');
    scan.work = join(root, 'work');
    scan.listenA = join(root, 'listen-bearer');
    scan.listenB = join(root, 'listen-basic');
    corpus = await makeCorpus(scan.work, DOCS, 'sec');
    writeFileSync(join(corpus.dir, 'broken.pdf'), '%PDF-1.4 not really a pdf'); // unreadable: a failure

    // Two receivers: bearer and basic, credentials from the environment.
    bearer = fileSpawn.spawnCli(
      ['listen', '--port', '0', '--data-dir', scan.listenA, '-o', join(scan.listenA, 'events.jsonl')],
      {
        env: { EXTRACT_LISTEN_TOKEN: BEARER },
      },
    );
    basic = fileSpawn.spawnCli(
      [
        'listen',
        '--port',
        '0',
        '--user',
        BASIC_USER,
        '--data-dir',
        scan.listenB,
        '-o',
        `${join(scan.listenB, 'records')}/`,
      ],
      { env: { EXTRACT_LISTEN_PASSWORD: BASIC_PASSWORD } },
    );
    urlA = (await bearer.waitFor(/Listening on (\S+)/))[1]!;
    urlB = (await basic.waitFor(/Listening on (\S+)/))[1]!;

    // serve, logging every request and delivery (no -q), with both webhooks and some failing documents.
    const parser = {
      ...DEFAULT_CONFIG.parsers[0]!,
      api_keys: [API_KEY],
      webhooks: [
        { url: urlA, method: 'POST' as const, auth: { type: 'bearer' as const, token: BEARER } },
        {
          url: urlB,
          method: 'PUT' as const,
          auth: { type: 'basic' as const, username: BASIC_USER, password: BASIC_PASSWORD },
        },
      ],
    };
    const configDir = fileTempDir('extract-secrets-config-'); // holds the keys on purpose; not scanned
    const config = writeServeConfig(configDir, {
      parsers: [parser],
      faults: { seed: 3, rules: [{ operation: 'extract-async', probability: 0.4, effect: { type: 'async_error' } }] },
    });
    server = await fileSpawn.spawnServe(['--in-memory', '--config', config, '--no-listen']);
    startup = server.output().length; // serve prints its configured keys at start, by design
  }, 120_000);

  it('no API key, token or password appears in any output, log, report, record file or journal', async () => {
    const { work, listenA, listenB } = scan;
    const env = (key: string) =>
      cleanEnv({
        EXTRACT_API_KEY: key,
        EXTRACT_BASE_URL: server.url,
        EXTRACT_CONFIG_DIR: join(work, '.config'),
        XDG_STATE_HOME: stateHomeIn(work),
      });
    const common = [
      'in/',
      '--inline-max',
      String(corpus.inlineMax),
      '--poll-interval',
      '50ms',
      '--poll-max-interval',
      '200ms',
      '--no-progress',
    ];
    const runs = [
      await extract(work, server.url, [...common, '-v', '-o', 'out.csv', '--report', 'report-1.json'], {
        env: env(API_KEY),
      }),
      await extract(
        work,
        server.url,
        [...common, '-v', '--retry-failed', '-o', 'out.json', '--report', 'report-2.json'],
        { env: env(API_KEY) },
      ),
      await extract(work, server.url, [...common, '--fresh', '-o', 'out-dir/', '--report', 'report-3.json'], {
        env: env(API_KEY),
      }),
      await extract(work, server.url, [...common, '-v', '--fresh', '--report', 'report-4.json'], { env: env(API_KEY) }), // JSON Lines on stdout
      await extract(work, server.url, [...common, '-v', '--fresh', '--report', 'report-401.json'], {
        env: env(WRONG_KEY),
      }),
      await extract(
        work,
        server.url,
        [...common, '-v', '--fresh', '--api-key', API_KEY, '--route', 'upload', '-o', 'out-flag.jsonl'],
        { env: cleanEnv({ EXTRACT_BASE_URL: server.url, EXTRACT_CONFIG_DIR: join(work, '.config') }) },
      ),
    ];
    const exits = runs.map((r) => r.exitCode);
    expect(exits[0]).toBe(1); // some documents failed (the broken file, injected async errors)
    expect(exits[4]).toBe(4); // the wrong key
    expect(runs[4]!.stderr).toMatch(/rejected the API key/);

    // Wrong credentials at both receivers: 401, logged, and the wrong secret not echoed.
    const wrongA = await fetch(urlA, {
      method: 'POST',
      headers: { authorization: `Bearer ${WRONG_BEARER}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const wrongB = await fetch(urlB, {
      method: 'PUT',
      headers: {
        authorization: `Basic ${Buffer.from(`${BASIC_USER}:${WRONG_PASSWORD}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: '{}',
    });
    expect([wrongA.status, wrongB.status]).toEqual([401, 401]);
    const answers = (await wrongA.text()) + (await wrongB.text());

    // The emulator's integrations surface masks the secrets.
    const integrations = await (await fetch(`${server.url}/_emulator/integrations`)).text();

    // Deliveries reach both receivers, then they stop (their summary lines are logs too).
    await bearer.waitFor(/document\.processed|doc_/, 20_000);
    await basic.waitFor(/document\.processed|doc_/, 20_000);
    bearer.child.kill('SIGTERM');
    basic.child.kill('SIGTERM');
    await Promise.all([bearer.child, basic.child]);

    const texts: Array<{ where: string; text: string | Buffer }> = [
      ...runs.flatMap((r, i) => [
        { where: `client run ${i + 1} stdout`, text: String(r.stdout) },
        { where: `client run ${i + 1} stderr`, text: String(r.stderr) },
      ]),
      { where: 'serve request and delivery lines', text: server.output().slice(startup) },
      { where: 'listen (bearer) stdout', text: bearer.stdout() },
      { where: 'listen (bearer) stderr', text: bearer.stderr() },
      { where: 'listen (basic) stdout', text: basic.stdout() },
      { where: 'listen (basic) stderr', text: basic.stderr() },
      { where: 'receivers 401 answers', text: answers },
      { where: 'GET /_emulator/integrations', text: integrations },
      // Reports, -o outputs, the journal and its lock, the receivers' inboxes and records.
      ...[work, listenA, listenB].flatMap((d) => filesUnder(d).map((f) => ({ where: f.path, text: f.bytes }))),
    ];
    let bytes = 0;
    for (const { where, text } of texts) {
      const buf = Buffer.isBuffer(text) ? text : Buffer.from(text);
      bytes += buf.length;
      for (const secret of SECRETS) expect(buf.includes(secret), `${secret} in ${where}`).toBe(false);
      // Signed upload addresses: the signature never reaches a log line or a file.
      expect(/[?&]sig=[0-9a-f]{16}/.test(buf.toString('latin1')), `an upload signature in ${where}`).toBe(false);
    }
    // The scanner would see a key: serve's start-up lines print the configured key, by design.
    expect(server.output().slice(0, startup)).toContain(API_KEY);
    // The scan saw the real traffic: verbose request lines, serve's request lines, deliveries.
    expect(String(runs[0]!.stderr)).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/extract -> 200/);
    expect(server.output().slice(startup)).toMatch(/<-- POST \/api\/v1\/extract/);
    expect(bearer.stderr()).toMatch(/401/);
    expect(filesUnder(work).some((f) => f.path === defaultJournalIn(work))).toBe(true);
    console.log(
      `security: scanned ${texts.length} outputs, logs and files (${bytes} bytes) from 6 client runs (exits ${exits.join(', ')}), serve and 2 receivers, for ${SECRETS.length} secrets: none found`,
    );
  }, 120_000);

  it("the state database's password never appears: config, runs (-v), reports, outputs, status, errors", async () => {
    const pgServer = await startPostgres();
    try {
      const root = tempDir('extract-secrets-state-');
      const work = join(root, 'work');
      const corpus = await makeCorpus(work, 2, 'pgsec'); // one inline, one upload-and-poll
      // The scan's serve, its injected failures cleared: these runs are expected to succeed.
      expect((await fetch(`${server.url}/_emulator/faults`, { method: 'DELETE' })).status).toBe(200);
      const stateUrl = await pgServer.database();
      const configDir = join(root, 'config'); // holds the URL on purpose (mode 0600, like the API key); not scanned
      const env = (extra: Record<string, string> = {}) =>
        cleanEnv({
          EXTRACT_API_KEY: API_KEY,
          EXTRACT_BASE_URL: server.url,
          EXTRACT_CONFIG_DIR: configDir,
          ...extra,
        });
      const common = ['in/', '--inline-max', String(corpus.inlineMax), '--poll-interval', '50ms', '--no-progress'];
      const wrongUrl = stateUrl.replace(PG_PASSWORD, WRONG_PG_PASSWORD);
      const runs = [
        await extract(work, server.url, ['config', 'set', 'state_url', stateUrl], { env: env() }),
        await extract(work, server.url, ['config', 'get', 'state_url'], { env: env() }),
        await extract(work, server.url, ['config', 'list'], { env: env() }),
        await extract(work, server.url, [...common, '-v', '-o', 'out.jsonl', '--report', 'report-1.json'], {
          env: env(),
        }), // from the config store
        await extract(work, server.url, [...common, '-v', '-o', 'out.csv', '--report', 'report-2.json'], {
          env: env({ EXTRACT_STATE_URL: stateUrl }),
        }),
        await extract(work, server.url, [...common, '-v', '--state', stateUrl, '--report', 'report-3.json'], {
          env: env(),
        }),
        await extract(work, server.url, ['status', '--state', stateUrl], { env: env() }),
        await extract(work, server.url, ['status', '--json'], { env: env({ EXTRACT_STATE_URL: stateUrl }) }),
        await extract(work, server.url, [...common, '-v', '--state', wrongUrl, '--report', 'report-wrong.json'], {
          env: env(),
        }),
        await extract(work, server.url, ['status', '--state', wrongUrl], { env: env() }),
        await extract(work, server.url, [...common, '--state', `postgres://u:${WRONG_PG_PASSWORD}@[not-a-host/db`], {
          env: env(),
        }),
        await extract(work, server.url, ['config', 'set', 'state_url', `mysql://u:${WRONG_PG_PASSWORD}@h/db`], {
          env: env(),
        }),
      ];
      expect(runs.map((r) => r.exitCode)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 6, 6, 2, 2]);
      expect(runs[1]!.stdout).toMatch(/^postgres:\/\/\*\*\*@127\.0\.0\.1:\d+\//);
      expect(runs[3]!.stderr).toMatch(/sharing the batch through postgres:\/\/\*\*\*@/);
      expect(runs[8]!.stderr).toMatch(
        /could not create the journal tables in the state database postgres:\/\/\*\*\*@.*password authentication failed/,
      );
      const texts = [
        ...runs.flatMap((r, i) => [
          { where: `run ${i} stdout`, text: String(r.stdout) },
          { where: `run ${i} stderr`, text: String(r.stderr) },
        ]),
        ...filesUnder(work).map((f) => ({ where: f.path, text: f.bytes.toString('latin1') })),
      ];
      for (const { where, text } of texts) {
        expect(text.includes(PG_PASSWORD), `the database password in ${where}`).toBe(false);
        expect(text.includes(WRONG_PG_PASSWORD), `the wrong database password in ${where}`).toBe(false);
      }
      console.log(
        `security (state URL): scanned ${texts.length} outputs and files from ${runs.length} runs: no password`,
      );
    } finally {
      pgServer.stop();
    }
  }, 120_000);

  it('serve and listen bind loopback by default and warn on stderr when told to bind another address', async ({
    spawnCli,
    spawnServe,
  }) => {
    // The default: the scan's serve and receivers (beforeAll), started with no --host.
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.output()).not.toMatch(/warning: bound/);
    for (const [listen, url] of [
      [bearer, urlA],
      [basic, urlB],
    ] as const) {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
      expect(listen.output()).not.toMatch(/warning: bound/);
    }

    // Told otherwise: both start at once (on two cores, about half the time of one after another).
    const openListen = spawnCli([
      'listen',
      '--auth',
      'none',
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--data-dir',
      tempDir('extract-listen-'),
    ]);
    const open = await spawnServe(['--in-memory', '--no-listen', '-q', '--host', '0.0.0.0']);
    await open.waitFor(/warning: bound to 0\.0\.0\.0, not loopback/);
    expect(open.stderr()).toMatch(/warning: bound to 0\.0\.0\.0, not loopback/);
    expect(open.stdout()).not.toMatch(/warning: bound/);
    open.child.kill('SIGTERM');

    await openListen.waitFor(/warning: bound to 0\.0\.0\.0, not loopback/);
    expect(openListen.stderr()).toMatch(/warning: bound to 0\.0\.0\.0, not loopback.*--auth none lets them all in/);
    expect(openListen.stdout()).not.toMatch(/warning: bound/);
    openListen.child.kill('SIGTERM');
  }, 120_000);
});
