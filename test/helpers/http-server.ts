import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Bare HTTP servers a test stands up in place of a service, a proxy or a webhook receiver, on
 * 127.0.0.1 port 0: the `httpServer` fixture of test/helpers/fixtures.ts, which closes them after
 * the test and cuts their connections, answers left hanging or dripping included, so no test
 * waits on another's sockets.
 */
export type TestServer = { server: Server; port: number; url: string };
export type StartHttpServer = (handler: RequestListener) => Promise<TestServer>;

/** Starts a server into `open`, where closeAll finds it. */
export async function startHttpServer(open: Set<Server>, handler: RequestListener): Promise<TestServer> {
  const server = createServer(handler);
  open.add(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, port, url: `http://127.0.0.1:${port}` };
}

export async function closeAll(open: Set<Server>): Promise<void> {
  const servers = [...open];
  open.clear();
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    ),
  );
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
