import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEachTest } from './cleanup.ts';

/**
 * Bare HTTP servers a test stands up in place of a service, a proxy or a webhook receiver,
 * on 127.0.0.1 port 0. After each test they are closed and their connections cut, answers
 * left hanging or dripping included, so no test waits on another's sockets.
 */
const servers = new Set<Server>();
afterEachTest(async () => {
  const open = [...servers];
  servers.clear();
  await Promise.all(
    open.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    ),
  );
});

export type TestServer = { server: Server; port: number; url: string };

export async function httpServer(handler: RequestListener): Promise<TestServer> {
  const server = createServer(handler);
  servers.add(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, port, url: `http://127.0.0.1:${port}` };
}

/**
 * Writes up to `totalBytes` of `fill` into `res` as fast as the reader takes them (a hostile
 * answer of 300 MB by default), then ends it; `written()` says how much went out.
 */
export function flood(res: ServerResponse, fill: number, totalBytes = 300 * 1024 * 1024): { written: () => number } {
  const chunk = Buffer.alloc(64 * 1024, fill);
  let written = 0;
  const pump = (): void => {
    while (written < totalBytes) {
      written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
  return { written: () => written };
}
