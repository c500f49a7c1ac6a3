import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { StopSignal } from '../../src/batch/options.ts';
import { defaultClientDeps } from '../../src/client/deps.ts';
import type { WatchDeps } from '../../src/watch/watch.ts';

/**
 * runWatch in process against the real emulator, with the folder's events injected: delivered
 * by the test, or lost. The real clock with short intervals (the settle rule itself is tested
 * on an injected clock in settle.test.ts): runBatch polls the real emulator, whose work takes
 * real time.
 */
export function watchDeps(cwd: string, hooks: Partial<WatchDeps> = {}) {
  const start = Date.now();
  let err = '';
  // As process.on: the watcher and each batch run subscribe, each for itself.
  const handlers = new Set<(s: StopSignal) => void>();
  const deps: WatchDeps = {
    ...defaultClientDeps(),
    cwd,
    env: { XDG_STATE_HOME: join(cwd, '.state') },
    stdout: new Writable({ write: (_c, _e, cb) => cb() }),
    stderr: new Writable({
      write: (c, _e, cb) => {
        err += String(c);
        cb();
      },
    }),
    isTTY: false,
    onSignal: (h) => {
      handlers.add(h);
      return () => handlers.delete(h);
    },
    exitNow: () => {},
    openForWriting: async () => new Set(),
    ...hooks,
  };
  return {
    deps,
    elapsed: () => Date.now() - start,
    stderr: () => err,
    stop: () => {
      for (const h of handlers) h('SIGTERM');
    },
  };
}

export async function until(check: () => boolean, what: string, log: () => string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${log()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function lines(path: string): Array<Record<string, unknown>> {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
