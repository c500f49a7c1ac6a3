import {
  type BatchOptions,
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_PENDING,
  DEFAULT_STATE_WAIT_MS,
} from '../batch/options.ts';
import type { Verbosity } from '../ui/progress.ts';
import { DEFAULT_INLINE_MAX, type RouteFlag } from '../batch/route.ts';
import type { KeySource } from '../batch/session.ts';
import { parseCount, parseDuration, parseSize } from '../flags/units.ts';
import { DEFAULT_POLL, type PollPolicy } from '../client/backoff.ts';
import { ExtractError } from '../errors.ts';
import { parseExplode } from '../outputs/index.ts';

/** The flags of `extract [options] <inputs...>` as commander hands them over (strings, unparsed). */
export type RunFlags = {
  out?: string;
  format?: string;
  explode?: string[];
  route?: string;
  inlineMax?: string;
  concurrency?: string;
  maxPending?: string;
  pollInterval?: string;
  pollMaxInterval?: string;
  pollTimeout?: string;
  /** A path or a postgres:// URL, or false for --no-state. */
  state?: string | false;
  lease?: string;
  stateWait?: string;
  fresh?: boolean;
  allFiles?: boolean;
  followLinks?: boolean;
  retryFailed?: boolean;
  ignore?: string[];
  dryRun?: boolean;
  maxCredits?: string;
  report?: string;
  review?: string;
  moveDone?: string;
  moveFailed?: string;
  settle?: string;
  /** false for --no-progress. */
  progress?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  apiKey?: string;
  baseUrl?: string;
  local?: boolean;
};

export const POLL_FLAGS = ['pollInterval', 'pollMaxInterval', 'pollTimeout'] as const;

/** Parses the flags people write ("8MB", "2s") into options; every mistake is a usage error (exit 2). */
export function batchOptionsFromFlags(
  flags: RunFlags,
  target: { baseUrl: string; apiKey: string | undefined; keySource?: KeySource | undefined },
): BatchOptions {
  if (flags.quiet === true && flags.verbose === true)
    throw new ExtractError('usage', '-q and -v contradict each other: keep one');
  const verbosity: Verbosity = flags.quiet === true ? 'quiet' : flags.verbose === true ? 'verbose' : 'normal';
  return {
    baseUrl: target.baseUrl,
    apiKey: target.apiKey,
    keySource: target.keySource,
    route: parseRoute(flags.route ?? 'auto'),
    inlineMax: flags.inlineMax === undefined ? DEFAULT_INLINE_MAX : parseSize(flags.inlineMax, '--inline-max'),
    concurrency:
      flags.concurrency === undefined ? DEFAULT_CONCURRENCY : parseCount(flags.concurrency, '-c/--concurrency'),
    maxPending: flags.maxPending === undefined ? DEFAULT_MAX_PENDING : parseCount(flags.maxPending, '--max-pending'),
    poll: pollPolicyFromFlags(flags),
    state: flags.state === false ? null : flags.state,
    leaseMs: flags.lease === undefined ? DEFAULT_LEASE_MS : parseLease(flags.lease),
    stateWaitMs: flags.stateWait === undefined ? DEFAULT_STATE_WAIT_MS : parseDuration(flags.stateWait, '--state-wait'),
    fresh: flags.fresh === true,
    allFiles: flags.allFiles === true,
    followLinks: flags.followLinks === true,
    retryFailed: flags.retryFailed === true,
    dryRun: flags.dryRun === true,
    maxCredits: flags.maxCredits === undefined ? undefined : parseCount(flags.maxCredits, '--max-credits', 0),
    ignore: flags.ignore ?? [],
    out: flags.out,
    format: flags.format,
    explode: parseExplode(flags.explode),
    report: flags.report,
    review: flags.review,
    moveDone: flags.moveDone,
    moveFailed: flags.moveFailed,
    settleMs: flags.settle === undefined ? 0 : parseDuration(flags.settle, '--settle'),
    noProgress: flags.progress === false,
    verbosity,
  };
}

export function pollPolicyFromFlags(flags: Pick<RunFlags, (typeof POLL_FLAGS)[number]>): PollPolicy {
  const poll: PollPolicy = {
    ...DEFAULT_POLL,
    intervalMs:
      flags.pollInterval === undefined ? DEFAULT_POLL.intervalMs : parseDuration(flags.pollInterval, '--poll-interval'),
    maxIntervalMs:
      flags.pollMaxInterval === undefined
        ? DEFAULT_POLL.maxIntervalMs
        : parseDuration(flags.pollMaxInterval, '--poll-max-interval'),
    timeoutMs:
      flags.pollTimeout === undefined ? DEFAULT_POLL.timeoutMs : parseDuration(flags.pollTimeout, '--poll-timeout'),
  };
  if (poll.intervalMs <= 0) throw new ExtractError('usage', '--poll-interval must be more than 0');
  if (poll.maxIntervalMs < poll.intervalMs)
    throw new ExtractError('usage', '--poll-max-interval must be at least --poll-interval');
  return poll;
}

function parseLease(text: string): number {
  const ms = parseDuration(text, '--lease');
  if (ms < 1000)
    throw new ExtractError('usage', '--lease must be at least 1s: a shorter lease is lost to an ordinary pause');
  return ms;
}

function parseRoute(text: string): RouteFlag {
  if (text === 'auto' || text === 'inline' || text === 'upload') return text;
  throw new ExtractError('usage', `--route "${text}": use auto, inline or upload`);
}
