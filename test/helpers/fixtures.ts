import type { Server } from 'node:http';
import { test as base } from 'vitest';
import { type HookServer, type HookServerOptions, startHookServer } from './hook-server.ts';
import { closeAll, type StartHttpServer, startHttpServer } from './http-server.ts';

/**
 * The servers a test stands up, as vitest fixtures: a test that names one in its context gets a
 * function that starts them, and vitest closes what it started when the test ends, passed or
 * failed. Fixtures belong to the test that asks, so they need no hook shared between the files
 * of a worker (`isolate: false`).
 *
 *   it('…', async ({ httpServer }) => { const { url } = await httpServer((req, res) => …); });
 */
export type Servers = {
  /** Bare HTTP servers standing in for a service, a proxy or a site (./http-server.ts). */
  httpServer: StartHttpServer;
  /** Servers that record the webhooks they receive (./hook-server.ts). */
  hookServer: (options?: HookServerOptions) => Promise<HookServer>;
};

export const it = base.extend<Servers>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
  httpServer: async ({}, use) => {
    const open = new Set<Server>();
    await use((handler) => startHttpServer(open, handler));
    await closeAll(open);
  },
  // biome-ignore lint/correctness/noEmptyPattern: as above
  hookServer: async ({}, use) => {
    const open = new Set<Server>();
    await use((options) => startHookServer(open, options));
    await closeAll(open);
  },
});
