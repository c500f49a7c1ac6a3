import type { BatchDeps } from '../batch/options.ts';
import { parseDuration } from '../flags/units.ts';
import { defaultClientDeps } from '../client/deps.ts';
import { ExtractError } from '../errors.ts';
import { runWatch } from '../watch/watch.ts';
import { DEFAULT_RESCAN_MS, DEFAULT_SETTLE_MS } from '../watch/defaults.ts';
import { batchOptionsFromFlags, type RunFlags } from './flags.ts';
import { favourMemory } from './heap.ts';
import type { CliHooks } from './run-action.ts';
import { withTarget } from './target.ts';

/** The flags of `extract watch` as commander hands them over: the batch run's, and its own. */
export type WatchFlags = RunFlags & {
  settle?: string;
  rescan?: string;
  /** false for --no-events. */
  events?: boolean;
};

/** Glue between `extract watch` and runWatch: settings or --local, process streams, signals. */
export async function watchFromCli(folders: string[], flags: WatchFlags, hooks: CliHooks): Promise<number> {
  const settleMs = flags.settle === undefined ? DEFAULT_SETTLE_MS : parseDuration(flags.settle, '--settle');
  const rescanMs = flags.rescan === undefined ? DEFAULT_RESCAN_MS : parseDuration(flags.rescan, '--rescan');
  if (rescanMs < 1000)
    throw new ExtractError('usage', '--rescan must be at least 1s: each rescan lists every watched folder');
  return withTarget(flags, hooks.env, { needKey: true, lookUpState: !hooks.explicitState }, async (target) => {
    // As a batch run: --state, then EXTRACT_STATE_URL and the config store, then the user's journal.
    const state = hooks.explicitState ? flags.state : target.local ? false : (target.stateUrl ?? flags.state);
    const batch = batchOptionsFromFlags({ ...flags, state }, target);
    const deps: BatchDeps = {
      ...defaultClientDeps(),
      cwd: process.cwd(),
      env: { ...hooks.env },
      stdout: process.stdout,
      stderr: process.stderr,
      isTTY: false,
      onSignal: hooks.onSignal,
      exitNow: hooks.exitNow,
    };
    favourMemory();
    return runWatch(folders, { batch, settleMs, rescanMs, events: flags.events !== false }, deps);
  });
}
