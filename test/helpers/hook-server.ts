import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A bare HTTP server that records what webhooks bring, answering with the statuses it is told:
 * the `hookServer` fixture of test/helpers/fixtures.ts, closed after the test.
 */
export type Hit = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
export type HookServerOptions = { statuses?: number[]; port?: number };
export type HookServer = Awaited<ReturnType<typeof startHookServer>>;

/** Starts a hook server into `open` (closed by closeAll of ./http-server.ts). */
export async function startHookServer(open: Set<Server>, options: HookServerOptions = {}) {
  const hits: Hit[] = [];
  const statuses = [...(options.statuses ?? [])];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok from hook server');
      for (const w of waiters.filter((w) => hits.length >= w.n)) w.resolve();
    });
  });
  open.add(server);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    hits,
    /** Resolves once `n` requests arrived, or rejects after `timeoutMs`. */
    waitFor(n: number, timeoutMs = 45_000) {
      if (hits.length >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`expected ${n} webhook requests, got ${hits.length}`)), timeoutMs);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      });
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
