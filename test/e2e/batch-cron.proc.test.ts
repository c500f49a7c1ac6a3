import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { DEFAULT_RETRY, backoffDelay } from '../../src/client/backoff.ts';
import { DEFAULT_CIRCUIT } from '../../src/client/circuit.ts';
import { cliStartMs } from '../helpers/baseline.ts';
import { spawnServe, tempDir } from '../helpers/cli.ts';
import { extract, fixtureNames, readJsonLines, reservesBySha, workDir } from './batch-helpers.ts';

/** A port of 127.0.0.1 that nothing listens on (taken, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('the cron loop', () => {
  it('serve down: exit 7 in seconds, nothing lost; serve up: the same command exits 0 and each document is charged once', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const cwd = workDir();
    const names = fixtureNames();
    const command = ['in/', '-q', '--poll-interval', '100ms', '--report', 'last-run.json'];

    const startMs = await cliStartMs();
    const started = performance.now();
    const down = await extract(cwd, url, command);
    const downMs = performance.now() - started;
    expect(down.exitCode, down.stderr).toBe(7);
    // In seconds, not every file's retries (minutes): the circuit's span (it opens after 5 s of
    // unanswered attempts), the longest backoff step that can cross it, and a few start-ups of
    // the CLI measured just before (a bound of 15 s failed on a busy machine; 6.6 s quiet).
    console.log(`serve down: exit 7 after ${downMs.toFixed(0)} ms (the CLI starts in ${startMs.toFixed(0)} ms)`);
    expect(downMs).toBeLessThan(
      DEFAULT_CIRCUIT.spanMs + backoffDelay(DEFAULT_RETRY.attempts - 1, () => 1) + 10 * startMs,
    );
    expect(down.stderr).toContain(url);
    expect(readJsonLines(String(down.stdout)).every((r) => r.status === 'not_submitted')).toBe(true);

    const dir = tempDir('extract-serve-');
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 4 } }));
    const serve = await spawnServe(['--in-memory', '--config', config, '--port', String(port)]);
    expect(serve.url).toBe(url);

    const up = await extract(cwd, url, command);
    expect(up.exitCode, up.stderr).toBe(0);
    expect(readJsonLines(String(up.stdout)).filter((r) => r.status === 'completed')).toHaveLength(names.length);
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(names.length);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
  });
});
