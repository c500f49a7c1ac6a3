import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { ConfigDeps } from '../../src/config/commands.ts';
import type { Env } from '../../src/config/settings.ts';
import { openConfigStore } from '../../src/config/store.ts';

export const KEY = 'ext_live_9f8e7d6c5b4a3210a1b2';

/** A fresh directory for a config store, removed after the test. */
export function useConfigDirs(): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), 'extract-config-'));
    made.push(dir);
    return dir;
  };
}

export type CapturedDeps = ConfigDeps & { out: string[]; err: string[] };

export function captureDeps(dir: string, options: { env?: Env; stdin?: string } = {}): CapturedDeps {
  const out: string[] = [];
  const err: string[] = [];
  return {
    store: openConfigStore({ dir }),
    env: options.env ?? {},
    stdout: (line) => out.push(line),
    stderr: (line) => err.push(line),
    readStdin: async () => options.stdin ?? '',
    out,
    err,
  };
}
