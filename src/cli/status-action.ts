import { DEFAULT_LEASE_MS } from '../journal/state/journal-state.ts';
import { runStatus } from '../commands/status.ts';
import type { StatusValues } from '../flags/batch.ts';
import { existsSync } from 'node:fs';
import { type Env, resolveSettings, resolveStateUrl, type SettingsStore } from '../config/settings.ts';
import { earlierJournals, LEGACY_STATE, userJournalPath } from '../journal/state/user-journal.ts';
import type { Cli } from './cli-context.ts';
import { missingMarkerOf } from './stored-settings.ts';
import { stderrLog, verbosityOf } from './verbosity.ts';

/** Glue between `extract status` and runStatus: which journal, process streams. */
export async function statusFromCli(_args: [], flags: StatusValues, { env }: Cli): Promise<number> {
  const verbosity = verbosityOf(flags);
  const state = await journalOf(flags.state, env);
  await runStatus(
    {
      state,
      json: flags.json,
      failed: flags.failed,
      uncertain: flags.uncertain,
      needsReview: flags.needsReview,
      missingMarker: await missingMarkerOf(flags, env),
      leaseMs: DEFAULT_LEASE_MS,
      outageMs: flags.stateWait,
    },
    {
      cwd: process.cwd(),
      stdout: process.stdout,
      log: stderrLog(verbosity),
    },
  );
  return 0;
}

/** The journal a command reads: `--state`, else the shared journal's URL, else the user's own. */
export async function journalOf(flagged: string | undefined, env: Env): Promise<string> {
  if (flagged !== undefined) return flagged;
  // conf (with ajv behind it) loads only when no --state says which journal.
  const { openConfigStore } = await import('../config/store.ts');
  const store = openConfigStore({ env });
  return resolveStateUrl(env, store) ?? userJournalOf(env, store);
}

/**
 * The journal a run keeps by default: the user's journal of the configured service; until a run
 * has taken them in, an earlier version's journal (the user's JSONL one, or this folder's); with
 * no service configured, this folder's.
 */
function userJournalOf(env: Env, store: SettingsStore): string {
  const { baseUrl } = resolveSettings({ flags: {}, env, store });
  if (baseUrl === undefined) return LEGACY_STATE;
  const path = userJournalPath(env, baseUrl);
  return existsSync(path) ? path : (earlierJournals(env, baseUrl, process.cwd())[0] ?? path);
}
