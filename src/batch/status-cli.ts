import type { Env } from '../config/settings.ts';
import { DEFAULT_LEASE_MS, DEFAULT_STATE } from './flags.ts';
import { runStatus } from './status.ts';

/** Glue between `extract status` and runStatus: which journal, process streams. */
export async function statusFromCli(flags: { state?: string | undefined; json?: boolean | undefined }, env: Env): Promise<number> {
  let state = flags.state;
  if (state === undefined) {
    const { resolveStateUrl } = await import('../config/settings.ts');
    const { openConfigStore } = await import('../config/store.ts');
    state = resolveStateUrl(env, openConfigStore({ env })) ?? DEFAULT_STATE;
  }
  await runStatus(
    { state, json: flags.json === true, leaseMs: DEFAULT_LEASE_MS },
    { cwd: process.cwd(), stdout: process.stdout, log: (level, message) => (level === 'warn' || level === 'error' ? process.stderr.write(`extract: ${message}\n`) : undefined) },
  );
  return 0;
}
