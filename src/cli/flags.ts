import type { BatchOptions } from '../batch/options.ts';
import { verbosityOf } from './verbosity.ts';
import type { KeySource } from '../batch/session.ts';
import { DEFAULT_POLL, type PollPolicy } from '../client/backoff.ts';
import { ExtractError } from '../errors.ts';
import type { RunValues, WatchValues } from '../flags/batch.ts';
import { parseExplode } from '../outputs/index.ts';
import type { WatchOptions } from '../watch/watch.ts';

/** What a watcher shares with a batch run; the run's own flags it lacks are those of a run that says nothing. */
type BatchFlagValues = Pick<RunValues, keyof WatchValues & keyof RunValues> & Partial<RunValues>;

/**
 * The batch run's options from its parsed flags (src/flags/batch.ts, where each default is
 * declared), the service and the journal: only the rules that join flags are here.
 */
export function batchOptionsFromFlags(
  flags: BatchFlagValues,
  target: { baseUrl: string; apiKey: string | undefined; keySource?: KeySource | undefined },
  state: string | null | undefined,
): BatchOptions {
  const verbosity = verbosityOf(flags);
  return {
    baseUrl: target.baseUrl,
    apiKey: target.apiKey,
    keySource: target.keySource,
    route: flags.route,
    inlineMax: flags.inlineMax,
    concurrency: flags.concurrency,
    maxPending: flags.maxPending,
    poll: pollPolicyOf(flags),
    state,
    leaseMs: flags.lease,
    stateWaitMs: flags.stateWait,
    fresh: flags.fresh === true,
    allFiles: flags.allFiles,
    followLinks: flags.followLinks,
    hidden: flags.hidden === true,
    formulaProtection: flags.noFormulaProtection !== true,
    retryFailed: flags.retryFailed === true,
    dryRun: flags.dryRun === true,
    maxCredits: flags.maxCredits,
    ignore: flags.ignore,
    out: flags.out,
    format: flags.format,
    explode: parseExplode(flags.explode),
    report: flags.report,
    review: flags.review,
    moveDone: flags.moveDone,
    moveFailed: flags.moveFailed,
    settleMs: flags.settle,
    noProgress: flags.noProgress === true,
    verbosity,
    color: flags.color,
  };
}

/**
 * A watcher's options from its parsed flags: its --settle is the settle rule's, so the batch it
 * runs per settled set leaves nothing unsettled (0, as a run that says nothing).
 */
export function watchOptionsFromFlags(
  flags: WatchValues,
  target: Parameters<typeof batchOptionsFromFlags>[1],
  state: string | null | undefined,
): WatchOptions {
  return {
    batch: batchOptionsFromFlags({ ...flags, settle: 0 }, target, state),
    settleMs: flags.settle,
    rescanMs: flags.rescan,
    events: !flags.noEvents,
  };
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
