import { connect } from 'node:net';
import { describe, expect } from 'vitest';
import { it } from './helpers/fixtures.ts';

/** Whether something accepts a connection on 127.0.0.1:port now. */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('the server fixtures (test/helpers/fixtures.ts)', () => {
  const ports: number[] = [];

  it('a test starts a stand-in and a hook server, and leaves an answer hanging', async ({ httpServer, hookServer }) => {
    let arrived!: () => void;
    const waiting = new Promise<void>((resolve) => (arrived = resolve));
    const standIn = await httpServer(() => arrived()); // never answers
    const hook = await hookServer();
    ports.push(standIn.port, hook.port);
    void fetch(standIn.url).catch(() => undefined);
    await waiting;
    expect(await accepts(standIn.port)).toBe(true);
    expect(await accepts(hook.port)).toBe(true);
  });

  it('the next test finds both closed, the hanging answer cut', async () => {
    expect(ports).toHaveLength(2);
    for (const port of ports) expect(await accepts(port)).toBe(false);
  });
});
