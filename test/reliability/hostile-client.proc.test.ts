import type { ServerResponse } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { defaultClientDeps, ServiceClient } from '../../src/client/index.ts';
import { CLI, cleanEnv, tempDir } from '../helpers/cli.ts';
import { flood, type StartHttpServer } from '../helpers/http-server.ts';

/**
 * The client against a hostile server: an answer of 300 MB is refused after the cap,
 * not held; a GET that drips a byte at a time is cut at the per-request limit; an API key with
 * a line break is a usage error before anything is sent.
 */

async function hostile(httpServer: StartHttpServer, handler: (res: ServerResponse) => void): Promise<string> {
  return (
    await httpServer((req, res) => {
      req.resume();
      handler(res);
    })
  ).url;
}

const noWait = defaultClientDeps({ sleep: async () => {} });
const KEY = 'ext_hostile_test_key_0001';

describe('hostile: the client against a hostile server', () => {
  it('an answer of 300 MB is refused at the cap, and the server could send only a little of it', async ({
    httpServer,
  }) => {
    let written = (): number => 0;
    const url = await hostile(httpServer, (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      written = flood(res, 0x20).written;
    });
    const client = new ServiceClient(
      {
        baseUrl: url,
        apiKey: KEY,
        retry: { attempts: 1, baseMs: 1, capMs: 1, maxRetryAfterMs: 1 },
        limits: { answerBytes: 1024 * 1024 },
      },
      noWait,
    );
    const err = await client.getDocument('doc_1').catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'network' });
    expect(String((err as Error).message)).toContain('EXTRACT_ANSWER_TOO_LARGE');
    console.log(`hostile answer: ${Math.round(written() / 1024 / 1024)} MB sent before the client hung up`);
    expect(written()).toBeLessThan(32 * 1024 * 1024);
  });

  it('a GET that drips one byte at a time is cut at the per-request limit', async ({ httpServer }) => {
    let requests = 0;
    const url = await hostile(httpServer, (res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 100);
      res.on('close', () => clearInterval(drip));
    });
    const client = new ServiceClient(
      {
        baseUrl: url,
        apiKey: KEY,
        retry: { attempts: 2, baseMs: 1, capMs: 1, maxRetryAfterMs: 1 },
        limits: { requestMs: 500 },
      },
      noWait,
    );
    const err = await client.getDocument('doc_1').catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'network' });
    // Both attempts were cut and answered as a failure: a drip that was not cut would hold the
    // first one forever (and the test to its time-out). Counted, not timed, so load cannot fail it.
    expect(requests).toBe(2);
  });

  it('an API key with CR/LF is a usage error (exit 2) before any request', async ({ httpServer }) => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.pdf'), '%PDF-1.4\n');
    let requests = 0;
    const url = await hostile(httpServer, (res) => {
      requests++;
      res.writeHead(500).end();
    });
    const r = await execa(
      process.execPath,
      [CLI, '--api-key', `${KEY}\r\nX-Evil: 1`, '--base-url', url, join(dir, 'a.pdf')],
      {
        env: cleanEnv(),
        extendEnv: false,
        reject: false,
        cwd: dir,
      },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('holds a character no key has');
    expect(r.stderr).not.toContain(KEY);
    expect(requests).toBe(0);
  });
});
