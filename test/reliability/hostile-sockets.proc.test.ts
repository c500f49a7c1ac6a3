import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { CLI, cleanEnv, tempDir, writeJson } from '../helpers/cli.ts';
import { payload } from '../receiver/helpers.ts';

/**
 * Idle sockets cannot exhaust serve or listen. Each runs as a child with a
 * file-descriptor limit of 400 (ulimit -n), a connection cap of 200, and is sent 1,500 idle
 * connections; then one honest request must be answered. Before the cap, the descriptors ran
 * out and every new connection was reset until the idle ones closed.
 */

const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

/** Starts the built CLI under `ulimit -n <fds>` and resolves with the URL it prints. */
async function startLimited(args: string[], fds: number, pattern: RegExp) {
  const child = execa('sh', ['-c', `ulimit -n ${fds} && exec "$0" "$@"`, process.execPath, CLI, ...args], {
    env: cleanEnv({}),
    extendEnv: false,
    reject: false,
    buffer: false,
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start line:\n${out}`)), 30_000);
    const on = (chunk: Buffer) => {
      out += chunk.toString();
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
  });
  onTestFinished(async () => {
    child.kill('SIGKILL');
    await child;
  });
  return { child, url, output: () => out };
}

/** Opens `n` connections that send nothing; resolves once each has connected, failed or waited 5 s. */
async function idleSockets(url: string, n: number): Promise<number> {
  const { hostname, port } = new URL(url);
  let connected = 0;
  for (let i = 0; i < n; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, n - i) }, () => {
        const s = connect({ host: hostname, port: Number(port) });
        sockets.push(s);
        s.on('error', () => {});
        return new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5000);
          s.once('connect', () => {
            connected++;
            clearTimeout(timer);
            resolve();
          });
          s.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }),
    );
  }
  return connected;
}

describe('hostile: idle sockets', () => {
  it('serve: 1,500 idle connections against a cap of 200 and 400 descriptors, then an honest request is answered', {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir();
    const config = writeJson(dir, 'config.json', { ...DEFAULT_CONFIG, connections: { max: 200 } });
    const serve = await startLimited(
      ['serve', '--port', '0', '--no-listen', '--config', config, '--data-dir', join(dir, 'data')],
      400,
      /Listening on (\S+)/,
    );
    await idleSockets(serve.url, 1500);
    const r = await fetch(`${serve.url}/_emulator/parsers`, { signal: AbortSignal.timeout(60_000) });
    expect(r.status).toBe(200);
    // Said in serve's log, so whoever runs it can tell why idle connections were closed.
    expect(serve.output()).toMatch(/connections: 200 open, the limit/);
  });

  it('listen: the same with --max-connections 200, then an honest event is acknowledged', {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir();
    const listen = await startLimited(
      ['listen', '--auth', 'none', '--port', '0', '--data-dir', join(dir, 'inbox'), '--max-connections', '200'],
      400,
      /Listening on (\S+)/,
    );
    await idleSockets(listen.url, 1500);
    const r = await fetch(listen.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload({ document_id: 'doc_after_flood' })),
      signal: AbortSignal.timeout(60_000),
    });
    expect(r.status).toBe(200);
    expect(listen.output()).toMatch(/connections: 200 open, the limit/);
  });
});
