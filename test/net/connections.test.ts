import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedServer } from '../../src/net/connections.ts';

/**
 * src/net/connections.ts: at the cap, a new connection first makes room by closing the connection
 * idle longest: never one with a request in progress, never one used more recently than another
 * idle one. (What every request pays for this bookkeeping is `npm run bench` row 6.)
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function start(maxConnections: number) {
  const lines: string[] = [];
  // /slow answers only when told to: a request in progress.
  const slow: Array<() => void> = [];
  const server = boundedServer({ maxConnections, idleTimeoutMs: 30_000, headersTimeoutMs: 30_000 }, (l) =>
    lines.push(l),
  )((request, response) => {
    const answer = () => response.end('ok');
    if (request.url === '/slow') slow.push(answer);
    else answer();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, lines, slow, server };
}

type Client = { socket: Socket; closed: () => boolean; request(path: string): Promise<void> };

/** A keep-alive connection; request() resolves once the answer's body arrived (or at once for /slow). */
async function client(port: number): Promise<Client> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  let closed = false;
  socket.once('close', () => (closed = true));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  let waiting: (() => void) | undefined;
  socket.on('data', (c: Buffer) => {
    if (c.toString().includes('ok')) waiting?.();
  });
  return {
    socket,
    closed: () => closed,
    request(path) {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      if (path === '/slow') return Promise.resolve();
      return new Promise<void>((r) => (waiting = r));
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 200));

describe('bounded connections', () => {
  it('at the cap, the connection idle longest is closed: not one used since, not one busy', async () => {
    const s = await start(3);
    const [a, b, c] = [await client(s.port), await client(s.port), await client(s.port)];
    await a!.request('/');
    await b!.request('/');
    await c!.request('/');
    // a is used again: b is now the one idle longest.
    await a!.request('/');
    const d = await client(s.port);
    await settle();
    expect([a!.closed(), b!.closed(), c!.closed(), d.closed()]).toEqual([false, true, false, false]);
    expect(s.lines.join('\n')).toContain('closed the one idle longest to make room');

    // c busy (a request in progress): a, idle, is closed next even though c's last request came first.
    await c!.request('/slow');
    await d.request('/');
    await settle();
    const e = await client(s.port);
    await settle();
    expect([a!.closed(), c!.closed(), d.closed(), e.closed()]).toEqual([true, false, false, false]);
    // Once answered, c is idle again, and the oldest: it goes next.
    s.slow.shift()!();
    await settle();
    await d.request('/');
    await e.request('/');
    const f = await client(s.port);
    await settle();
    expect([c!.closed(), d.closed(), e.closed(), f.closed()]).toEqual([true, false, false, false]);
    for (const x of [a, b, c, d, e, f]) x!.socket.destroy();
  });
});
