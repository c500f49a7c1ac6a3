import { createServer, request, type Server } from 'node:http';
import { afterEach, describe, expect } from 'vitest';
import { it, extract, readJsonLines, reservesBySha, workDir } from './batch-helpers.ts';

/**
 * A proxy in front of the emulator that holds the first PUT for `holdMs`, so its upload
 * address (expires_in 1 s) has expired by the time the bytes arrive. It rewrites the
 * upload_url of tickets to point at itself.
 */
function slowStorageProxy(
  target: string,
  holdMs: number,
): Promise<{ url: string; server: Server; puts: () => number }> {
  let puts = 0;
  const server = createServer((req, res) => {
    const isPut = req.method === 'PUT';
    const forward = (): void => {
      const upstream = request(`${target}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => {
          let body = Buffer.concat(chunks).toString('utf8');
          if (req.url?.endsWith('/upload-url')) body = body.split(target).join(`http://127.0.0.1:${port()}`);
          const headers = { ...up.headers, 'content-length': String(Buffer.byteLength(body)) };
          res.writeHead(up.statusCode ?? 502, headers);
          res.end(body);
        });
      });
      req.pipe(upstream);
    };
    if (isPut && puts++ === 0) setTimeout(forward, holdMs);
    else forward();
  });
  const port = (): number => {
    const a = server.address();
    return typeof a === 'object' && a ? a.port : 0;
  };
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${port()}`, server, puts: () => puts })),
  );
}

const proxies: Server[] = [];
afterEach(() => {
  for (const p of proxies.splice(0)) p.close();
});

describe('upload tickets', () => {
  it('an expired upload address is replaced by a new ticket', async ({ serve }) => {
    const emulator = await serve({ upload: { expires_in: 1 } });
    const proxy = await slowStorageProxy(emulator.url, 2100);
    proxies.push(proxy.server);
    const cwd = workDir();
    const run = await extract(cwd, proxy.url, [
      'in/01-us-standard.pdf',
      '--route',
      'upload',
      '--poll-interval',
      '100ms',
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/upload address expired/);
    // At least one replacement; on a loaded machine a 1 s address can expire again.
    expect(proxy.puts()).toBeGreaterThanOrEqual(2);
    expect(readJsonLines(String(run.stdout))[0]).toMatchObject({ status: 'completed', route: 'upload' });
    expect([...(await reservesBySha(emulator.url)).values()]).toEqual([1]);
  });
});
