import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { parse } from 'csv-parse/sync';
import { describe, expect } from 'vitest';
import { CLI, cleanEnv, stateHomeIn, tempDir } from '../helpers/cli.ts';
import { payload, send } from '../receiver/helpers.ts';
import { KEY, extract, fixtureNames, reservesBySha, serveForFile, workDir } from './batch-helpers.ts';
import { dropDir, dropInvoices, jsonLinesOf, signal, startWatch } from './watch-helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Logs never decide the fate of a document: a reader of the logs that leaves early (`2>&1 | head
 * -3`) switches logging off, and the run finishes as it would have without the pipe. The stand-in
 * service ignores Idempotency-Key, so every POST extract is a charge: a run that abandons a paid
 * document, and a rerun that pays for it again, would show in the ledger.
 */

const service = serveForFile({ idempotency_key: false });
const ALL = fixtureNames();
const ARGS = ['in/', '--state', 'j.jsonl', '--poll-interval', '100ms'];

/** The built CLI with stdout (and stderr: `2>&1`) into `head -3`; its own exit code (not head's) in rc.txt. */
async function throughHead(cwd: string, url: string, args: string[], stderr = '2>&1') {
  const script = `"${process.execPath}" "${CLI}" ${args.join(' ')} ${stderr} | head -3; echo "\${PIPESTATUS[0]}" > rc.txt`;
  const run = await execa('bash', ['-c', script], {
    cwd,
    env: cleanEnv({
      EXTRACT_API_KEY: KEY,
      EXTRACT_BASE_URL: url,
      EXTRACT_CONFIG_DIR: join(cwd, '.config'),
      XDG_STATE_HOME: stateHomeIn(cwd),
    }),
    extendEnv: false,
    reject: false,
  });
  return { shown: String(run.stdout), code: Number(readFileSync(join(cwd, 'rc.txt'), 'utf8').trim()) };
}

function csvRows(path: string): Array<Record<string, string>> {
  return parse(readFileSync(path, 'utf8'), { columns: true }) as Array<Record<string, string>>;
}

describe('a closed log pipe', { timeout: 180_000 }, () => {
  it('extract DIR -o out.csv 2>&1 | head -3: exit 0, every row written, each document paid once (a rerun pays nothing)', async () => {
    const url = service();
    const cwd = workDir();
    const run = await throughHead(cwd, url, [...ARGS, '-o', 'out.csv']);
    expect(run.shown.split('\n').filter((l) => l !== '').length).toBeLessThanOrEqual(3);
    expect(run.code, run.shown).toBe(0);
    const rows = csvRows(join(cwd, 'out.csv'));
    expect(rows.map((r) => r.status)).toEqual(ALL.map(() => 'completed'));
    const rerun = await extract(cwd, url, [...ARGS, '-o', 'out.csv', '--retry-failed', '--no-progress']);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(ALL.length);
    expect([...reserves.values()]).toEqual(ALL.map(() => 1));
    expect(csvRows(join(cwd, 'out.csv'))).toHaveLength(ALL.length);
  });

  it('stdout as the output (the default, -o -) with its reader gone: the log pipe changes nothing, each document paid once a run', async () => {
    const url = service();
    for (const out of [[], ['-o', '-']]) {
      const logsToo = await throughHead(workDir(), url, [...ARGS, ...out], '2>&1');
      const recordsOnly = await throughHead(workDir(), url, [...ARGS, ...out], '2>logs.txt');
      expect(logsToo.code, logsToo.shown).toBe(recordsOnly.code);
    }
    const reserves = await reservesBySha(url);
    expect([...reserves.values()]).toEqual(ALL.map(() => 4));
  });
});

describe('a closed log pipe, for the commands that never end', { timeout: 180_000 }, () => {
  it('extract watch: its stderr closed by the reader, it goes on recording and appending; SIGTERM exits 0', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', '--settle', '200ms']);
    watcher.child.stderr!.destroy();
    const files = await dropInvoices(cwd, 4);
    await expect
      .poll(() =>
        jsonLinesOf(join(cwd, 'out.jsonl'))
          .map((r) => r.file)
          .sort(),
      )
      .toEqual(files);
    const more = await dropInvoices(cwd, 2, 4);
    await expect.poll(() => jsonLinesOf(join(cwd, 'out.jsonl')).length).toBe(files.length + more.length);
    signal(watcher, 'SIGTERM');
    expect((await watcher.child).exitCode).toBe(0);
    const reserves = await reservesBySha(url);
    expect([...reserves.values()]).toEqual([...files, ...more].map(() => 1));
  });

  it('extract listen: its stderr closed by the reader, every event acknowledged is written; SIGINT exits 0', async ({
    spawnCli,
  }) => {
    const base = tempDir();
    const out = join(base, 'records.jsonl');
    const listener = spawnCli([
      'listen',
      '--auth',
      'none',
      '--port',
      '0',
      '--data-dir',
      join(base, 'inbox'),
      '-o',
      out,
    ]);
    const [, url] = await listener.waitFor(/^Listening on (\S+)$/m);
    listener.child.stderr!.destroy();
    // Each event is a log line ("<-- doc_N ..."): the first one meets the closed pipe.
    const ids = ['doc_1', 'doc_2', 'doc_3', 'doc_4'];
    for (const id of ids) expect((await send(url!, payload({ document_id: id }))).status).toBe(200);
    await expect.poll(() => jsonLinesOf(out).map((r) => r.document_id)).toEqual(ids);
    signal(listener, 'SIGINT');
    expect((await listener.child).exitCode).toBe(0);
  });
});
