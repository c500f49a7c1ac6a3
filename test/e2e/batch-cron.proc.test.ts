import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { tempDir } from '../helpers/cli.ts';
import { extract, fixtureNames, readJsonLines, reservesBySha, workDir } from './batch-helpers.ts';
import { it } from '../helpers/fixtures.ts';

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
  it('serve down: exit 7 (the circuit opens), nothing lost; serve up: the same command exits 0 and each document is charged once', async ({
    spawnServe,
  }) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const cwd = workDir();
    const names = fixtureNames();
    const command = ['in/', '-q', '--poll-interval', '100ms', '--report', 'last-run.json'];

    // The circuit opens (exit 7) rather than every file's retries running out; how long that takes
    // is not asserted (a loaded machine moves it).
    const down = await extract(cwd, url, command);
    expect(down.exitCode, down.stderr).toBe(7);
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
