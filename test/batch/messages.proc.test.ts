import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { startServer, type RunningServer } from '../../src/emulator/server.ts';
import type { Engine } from '../../src/engine/types.ts';
import { it } from '../helpers/fixtures.ts';
import { ExtractError } from '../../src/errors.ts';
import { CLI, cleanEnv, tempDir } from '../helpers/cli.ts';
import { batchOptions, invoiceDir, run } from './harness.ts';

/** Messages a user can act on (issue: unattended runs): each says what happened and what to do next. */

const KEY = DEFAULT_CONFIG.parsers[0]!.api_keys[0]!;
const servers = new Set<RunningServer>();
afterEach(async () => {
  await Promise.all([...servers].map((s) => s.close()));
  servers.clear();
});

async function emulator(engine: Engine): Promise<RunningServer> {
  const server = await startServer({
    config: { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 2 } },
    host: '127.0.0.1',
    port: 0,
    inMemory: true,
    log: () => {},
    engine,
  });
  servers.add(server);
  return server;
}

describe('messages', () => {
  it('a rejected key names where it came from and a command that works', async ({ sharedEngine }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(1);
    const wrong = 'ext_not_a_key_of_this_parser';
    const fromConfig = await run(cwd, ['in/'], { ...batchOptions(server.url, wrong), keySource: 'config' });
    expect(fromConfig.summary.exit_code).toBe(4);
    expect(fromConfig.stderr).toContain('the key came from the config store');
    expect(fromConfig.stderr).toContain('extract config set api_key -');
    expect(fromConfig.stderr).not.toContain('config get api-key');
    const fromEnv = await run(cwd, ['in/'], { ...batchOptions(server.url, wrong), keySource: 'env' });
    expect(fromEnv.stderr).toContain('the key came from EXTRACT_API_KEY');
    expect(`${fromEnv.stderr}${fromConfig.stderr}`).not.toContain(wrong);
  });

  it('a key rejected while asking about documents the journal holds says so once, and where the key came from', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(1);
    expect((await run(cwd, ['in/'], batchOptions(server.url, KEY))).summary.exit_code).toBe(0);
    const wrong = 'ext_not_a_key_of_this_parser';
    // Asked before anything is sent (probe.ts), the answer stops the run as an error: exit 4.
    const err = await run(cwd, ['in/'], { ...batchOptions(server.url, wrong), keySource: 'env' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ExtractError);
    expect((err as ExtractError).code).toBe('auth');
    const { message } = err as ExtractError;
    expect(message.match(/rejected the API key/g)).toHaveLength(1);
    expect(message).toContain('the key came from EXTRACT_API_KEY');
    expect(message).not.toContain(wrong);
  });

  it('--explode with an output that is not CSV is a usage error before anything is sent', async () => {
    const cwd = await invoiceDir(1);
    const err = await run(
      cwd,
      ['in/'],
      batchOptions('http://127.0.0.1:9', KEY, { explode: 'line_items', out: 'out.json' }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExtractError);
    expect((err as ExtractError).code).toBe('usage');
    expect((err as ExtractError).message).toMatch(/--explode line_items .* output is json/);
  });

  it('--explode naming no table (an unknown or Object field) ends in exit 2, with the tables listed', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(2);
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { explode: 'no_such_table', out: 'out.csv' }));
    expect(r.summary.completed).toBe(2);
    expect(r.summary.exit_code).toBe(2);
    expect(r.stderr).toMatch(/--explode no_such_table: no document has a table there/);
  });

  it('-q keeps the reason for an exit 2: the --explode line is printed as the error it now is', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(1);
    const options = batchOptions(server.url, KEY, { explode: 'no_such_table', out: 'out.csv', verbosity: 'quiet' });
    const r = await run(cwd, ['in/'], options);
    expect(r.summary.exit_code).toBe(2);
    expect(r.stderr.match(/--explode no_such_table: no document has a table there/g)).toHaveLength(1);
  });

  it('a missing --move-done or --move-failed folder is one usage error before anything is sent', async () => {
    const cwd = await invoiceDir(3);
    for (const [flag, options] of [
      ['--move-done', { moveDone: 'nowhere' }],
      ['--move-failed', { moveFailed: 'nowhere' }],
    ] as const) {
      // Nothing listens at port 9: a run that sent anything would end otherwise.
      const err = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, options)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ExtractError);
      expect((err as ExtractError).code).toBe('usage');
      expect((err as ExtractError).message).toBe(
        `${flag} nowhere: no such folder: create it (mkdir nowhere) or name another, then rerun; nothing was sent`,
      );
    }
    writeFileSync(join(cwd, 'a-file'), '');
    const err = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { moveDone: 'a-file' })).catch(
      (e: unknown) => e,
    );
    expect((err as ExtractError).message).toMatch(/^--move-done a-file is not a folder: name a folder/);
  });

  it('a rerun with every file done earlier says there is nothing to send, not "0 documents"', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(2);
    expect((await run(cwd, ['in/'], batchOptions(server.url, KEY))).summary.exit_code).toBe(0);
    const rerun = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(rerun.summary.exit_code).toBe(0);
    expect(rerun.stderr).not.toMatch(/\b0 documents/);
    expect(rerun.stderr).toMatch(/info {2}nothing to send: 2 files done earlier\n/);
  });

  it('without a journal, the hint does not promise that a rerun skips anything', async () => {
    const cwd = await invoiceDir(2);
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { state: null }));
    expect(r.stderr).not.toMatch(/completed documents are skipped/);
    expect(r.stderr).toMatch(/no journal was kept/);
  });

  it('a mistyped subcommand says "did you mean", before anything else; get without an id points to its help', async () => {
    const cwd = tempDir();
    for (const [typo, meant] of [
      ['serv', 'serve'],
      ['lsiten', 'listen'],
    ] as const) {
      const r = await execa(process.execPath, [CLI, typo], { cwd, env: cleanEnv(), extendEnv: false, reject: false });
      expect(r.exitCode).toBe(2);
      expect(r.stderr.split('\n')[0]).toBe(
        `extract: unknown command "${typo}": did you mean "extract ${meant}"? (to extract a file of that name, write ./${typo})`,
      );
    }
    const get = await execa(process.execPath, [CLI, 'get'], { cwd, env: cleanEnv(), extendEnv: false, reject: false });
    expect(get.exitCode).toBe(2);
    expect(get.stderr).toMatch(/^extract: missing required argument/);
    expect(get.stderr).toContain('extract get --help');
  });
});
