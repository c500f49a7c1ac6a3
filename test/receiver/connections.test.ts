import { connect } from 'node:net';
import { describe, expect } from 'vitest';
import { it } from './helpers.ts';

/**
 * The connection cap (src/net/connections.ts): past the connection cap, when no connection is idle to
 * close, a new one is answered 503 with Connection: close and a body saying why, and it is
 * logged; nothing is refused silently.
 */

/** Opens a connection and sends `text`; resolves with everything the server sends until it closes. */
function rawExchange(url: string, text: string) {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.on('error', () => {});
  let got = '';
  socket.on('data', (c: Buffer) => (got += c.toString()));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(got)));
  const ready = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  void ready.then(() => socket.write(text));
  return { socket, closed, ready };
}

describe('listen: connections bounded', () => {
  it('with every connection busy, a new one is answered 503 with Connection: close, and it is logged', async ({
    receiver,
  }) => {
    const r = await receiver({ maxConnections: 2 });
    const path = new URL(r.url).pathname;
    // Two requests in progress: headers sent, the body not yet.
    const busy = [1, 2].map(() =>
      rawExchange(
        r.url,
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
      ),
    );
    await Promise.all(busy.map((b) => b.ready));
    await new Promise((res) => setTimeout(res, 300));
    const third = rawExchange(r.url, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const answer = await third.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toContain('too many connections open (the limit is 2');
    await r.waitForLine(/connections: 2 open and busy, the limit: refused a new one with 503/);
    for (const b of busy) b.socket.destroy();
  });
});
