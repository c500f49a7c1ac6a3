import type { Server } from 'node:http';
import type { ResultPromise } from 'execa';
import { test as base } from 'vitest';
import type { RunningServer } from '../../src/emulator/server.ts';
import type { EnginePool } from '../../src/engine/index.ts';
import type { Engine } from '../../src/engine/types.ts';
import { killAll, type Spawners, spawners, type TempDir, tempDirs } from './cli.ts';
import { type SharedEngine, shareEngine, type StartEmulator, startEmulator, testEnginePool } from './emulator.ts';
import { type HookServer, type HookServerOptions, startHookServer } from './hook-server.ts';
import { closeAll, type StartHttpServer, startHttpServer } from './http-server.ts';

/**
 * The servers and processes a test stands up, as vitest fixtures: a test that names one in its
 * context gets a function that starts them, and vitest stops what it started when the test ends,
 * passed or failed (before the test's folders are removed). Fixtures belong to the test (or, for
 * the `file…` ones, the file) that asks, so they need no hook shared between the files of a worker
 * (`isolate: false`).
 *
 *   it('…', async ({ emulator }) => { const s = await emulator({ … }); });
 *   it.beforeAll(async ({ fileEmulator }) => { shared = await fileEmulator(); });
 */
export type Servers = {
  /** Bare HTTP servers standing in for a service, a proxy or a site (./http-server.ts). */
  httpServer: StartHttpServer;
  /** Servers that record the webhooks they receive (./hook-server.ts). */
  hookServer: (options?: HookServerOptions) => Promise<HookServer>;
};

/** Children started by one fixture, killed when it ends. */
function childrenOf(onCleanup: (fn: () => Promise<void>) => void): Set<ResultPromise> {
  const children = new Set<ResultPromise>();
  onCleanup(() => killAll(children));
  return children;
}

export const it = base
  .extend<Servers>({
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
  })
  // The engine of a file's in-process emulators (./emulator.ts, shareEngine), closed after the file.
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
  .extend('engines', { scope: 'file' }, async ({}, { onCleanup }): Promise<SharedEngine> => {
    const shared = shareEngine();
    onCleanup(() => shared.drop());
    return shared;
  })
  /** That engine, for a server the test starts itself; work the test leaves in it goes with it. */
  .extend('sharedEngine', async ({ engines }, { onCleanup }): Promise<Engine> => {
    // Torn down after the emulators that read through it: work still in it is the finished test's
    // (a bomb, a document its server dropped), and the next test gets an engine of its own.
    onCleanup(async () => {
      if (engines.busy()) await engines.drop();
    });
    return engines.engine;
  })
  /** In-process emulators (./emulator.ts) on the file's engine, closed after the test. */
  .extend('emulator', async ({ sharedEngine }, { onCleanup }): Promise<StartEmulator> => {
    const open = new Set<RunningServer>();
    onCleanup(async () => {
      await Promise.all([...open].map((s) => s.close()));
    });
    return async (overrides, options) => {
      const server = await startEmulator(() => sharedEngine, overrides, options);
      open.add(server);
      return server;
    };
  })
  /**
   * Emulators shared by a file's tests (started in `it.beforeAll`), closed after the file, each
   * with an engine of its own, as a `serve` of the file's would have: work a test leaves in it
   * goes on.
   */
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
  .extend('fileEmulator', { scope: 'file' }, async ({}, { onCleanup }): Promise<StartEmulator> => {
    const open = new Set<RunningServer>();
    const pools = new Set<EnginePool>();
    onCleanup(async () => {
      await Promise.all([...open].map((s) => s.close()));
      await Promise.all([...pools].map((p) => p.close()));
    });
    return async (overrides, options) => {
      const server = await startEmulator(
        () => {
          const pool = testEnginePool();
          pools.add(pool);
          return pool;
        },
        overrides,
        options,
      );
      open.add(server);
      return server;
    };
  })
  /** Folders for a file's tests (made in `it.beforeAll`), removed after the file (tempDir is a test's). */
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
  .extend('fileTempDir', { scope: 'file' }, async ({}, { onCleanup }): Promise<TempDir> => {
    const dirs = tempDirs();
    onCleanup(() => dirs.removeAll());
    return dirs.make;
  })
  /** The built CLI as a long-running child (./cli.ts), killed after the test. */
  .extend(
    'spawnCli',
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
    async ({}, { onCleanup }): Promise<Spawners['spawnCli']> => spawners(childrenOf(onCleanup)).spawnCli,
  )
  /** `extract serve` as a child, once its start-up lines are printed; killed after the test. */
  .extend(
    'spawnServe',
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
    async ({}, { onCleanup }): Promise<Spawners['spawnServe']> => spawners(childrenOf(onCleanup)).spawnServe,
  )
  /** A Node script as a child, killed after the test. */
  .extend(
    'spawnNode',
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
    async ({}, { onCleanup }): Promise<Spawners['spawnNode']> => spawners(childrenOf(onCleanup)).spawnNode,
  )
  /** The built CLI and `extract serve` as children shared by a file's tests, killed after the file. */
  .extend(
    'fileSpawn',
    { scope: 'file' },
    async ({ fileTempDir }, { onCleanup }): Promise<Spawners> => spawners(childrenOf(onCleanup), fileTempDir),
  );
