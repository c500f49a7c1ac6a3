import { DEFAULT_LEASE_MS, DEFAULT_STATE, DEFAULT_STATE_WAIT_MS } from '../batch/options.ts';
import { runStatus } from '../batch/status.ts';
import { parseDuration } from '../batch/units.ts';
import type { Env } from '../config/settings.ts';

/** Glue between `extract status` and runStatus: which journal, process streams. */
export async function statusFromCli(
  flags: { state?: string | undefined; json?: boolean | undefined; stateWait?: string | undefined },
  env: Env,
): Promise<number> {
  let state = flags.state;
  if (state === undefined) {
    const { resolveStateUrl } = await import('../config/settings.ts');
    const { openConfigStore } = await import('../config/store.ts');
    state = resolveStateUrl(env, openConfigStore({ env })) ?? DEFAULT_STATE;
  }
  await runStatus(
    {
      state,
      json: flags.json === true,
      leaseMs: DEFAULT_LEASE_MS,
      outageMs: flags.stateWait === undefined ? DEFAULT_STATE_WAIT_MS : parseDuration(flags.stateWait, '--state-wait'),
    },
    {
      cwd: process.cwd(),
      stdout: process.stdout,
      log: (level, message) =>
        level === 'warn' || level === 'error' ? process.stderr.write(`extract: ${message}\n`) : undefined,
    },
  );
  return 0;
}
