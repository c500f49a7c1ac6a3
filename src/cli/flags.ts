import { type BatchOptions, JOINED_FLAGS } from '../batch/options.ts';
import { verbosityOf } from './verbosity.ts';
import type { KeySource } from '../batch/session.ts';
import { DEFAULT_POLL, type PollPolicy } from '../client/backoff.ts';
import { ExtractError } from '../errors.ts';
import { RUN_FLAGS, type RunValues, type WatchValues } from '../flags/batch.ts';
import { parseFlags } from '../flags/parse.ts';
import type { WatchOptions } from '../watch/watch.ts';

const JOINED: ReadonlySet<string> = new Set(JOINED_FLAGS);

/**
 * The batch run's options from its parsed flags (src/flags/batch.ts, where each default is
 * declared), the service and the journal: each flag under its own name, and the rules that
 * join flags.
 */
export function batchOptionsFromFlags(
  flags: RunValues,
  target: { baseUrl: string; apiKey: string | undefined; keySource?: KeySource | undefined },
  state: string | null | undefined,
): BatchOptions {
  const own = Object.fromEntries(
    Object.keys(RUN_FLAGS).flatMap((k) => (JOINED.has(k) ? [] : [[k, flags[k as keyof RunValues]]])),
  );
  return {
    ...(own as Omit<RunValues, (typeof JOINED_FLAGS)[number]>),
    poll: pollPolicyOf(flags),
    verbosity: verbosityOf(flags),
    baseUrl: target.baseUrl,
    apiKey: target.apiKey,
    keySource: target.keySource,
    state,
  };
}

/**
 * A watcher's options from its parsed flags. The batch it runs per settled set has the run's
 * flags a watcher lacks as a run that says nothing, and --settle 0: the settle rule is the
 * watcher's, so that batch leaves nothing unsettled.
 */
export function watchOptionsFromFlags(
  flags: WatchValues,
  target: Parameters<typeof batchOptionsFromFlags>[1],
  state: string | null | undefined,
): WatchOptions {
  const batch = batchOptionsFromFlags({ ...parseFlags(RUN_FLAGS, {}), ...flags, settle: 0 }, target, state);
  return { batch, settle: flags.settle, rescan: flags.rescan, noEvents: flags.noEvents };
}

/** The poll flags (run and get), checked against each other. */
export function pollPolicyOf(flags: Pick<RunValues, 'pollInterval' | 'pollMaxInterval' | 'pollTimeout'>): PollPolicy {
  const poll: PollPolicy = {
    ...DEFAULT_POLL,
    intervalMs: flags.pollInterval,
    maxIntervalMs: flags.pollMaxInterval,
    timeoutMs: flags.pollTimeout,
  };
  if (poll.intervalMs <= 0) throw new ExtractError('usage', '--poll-interval must be more than 0');
  if (poll.maxIntervalMs < poll.intervalMs)
    throw new ExtractError('usage', '--poll-max-interval must be at least --poll-interval');
  return poll;
}
