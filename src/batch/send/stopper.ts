import type { Log } from '../../client/deps.ts';
import type { BatchDeps, BatchOptions } from '../options.ts';
import type { StopReason } from '../outcome.ts';
import type { Reporter } from '../../ui/progress.ts';
import { keyHint } from '../session.ts';

/**
 * What makes a run stop submitting (Ctrl+C, SIGTERM, a 402, --max-credits, a rejected key, an
 * outage), decided once; the send step asks it before each submission.
 */

/** Why the run stopped submitting, once decided; the abort signal cuts requests in flight. */
export type Stopper = {
  readonly signal: AbortSignal;
  stop(reason: StopReason, message: string): void;
  reason(): StopReason | undefined;
  message(): string | null;
  /** Listens for SIGINT/SIGTERM until the returned function is called. */
  listen(): (() => void) | undefined;
  /**
   * Aborted by the next SIGINT/SIGTERM, whatever stopped the run before: the end of a run that
   * waits (for a FIFO's reader) must still answer a signal once submissions have stopped.
   */
  nextSignal(): AbortSignal;
};

export function createStopper(options: BatchOptions, deps: BatchDeps, log: Log, reporter: Reporter): Stopper {
  const abort = new AbortController();
  const waits = new Set<AbortController>();
  let stoppedBy: StopReason | undefined;
  let stopMessage: string | null = null;
  // `said`: the line at the moment of the stop, where it differs from the summary's (a hint that
  // is true only while the run is still going).
  const halt = (reason: StopReason, message: string, said?: string): void => {
    if (stoppedBy !== undefined) return;
    stoppedBy = reason;
    stopMessage = reason === 'auth' ? `${message}: ${keyHint(options.keySource)}` : message;
    // An outage, a rejected key or a wrong base URL is said once, by the summary (printed under -q
    // too, the exit code not being 0): the moment it was noticed only matters with -v.
    log(
      reason === 'unreachable' || reason === 'auth' || reason === 'wrong_service'
        ? 'debug'
        : reason === 'interrupted' || reason === 'max_credits'
          ? 'warn'
          : 'error',
      said ?? stopMessage,
    );
    // 402 and --max-credits only stop submitting; documents already paid for are still collected.
    if (reason === 'interrupted' || reason === 'auth' || reason === 'unreachable' || reason === 'wrong_service')
      abort.abort();
  };
  return {
    signal: abort.signal,
    stop: (reason, message) => halt(reason, message),
    reason: () => stoppedBy,
    message: () => stopMessage,
    nextSignal() {
      const wait = new AbortController();
      waits.add(wait);
      return wait.signal;
    },
    listen() {
      let firstSignalAt: number | undefined;
      return deps.onSignal?.((signal) => {
        // conf (the config store) loads when-exit, which re-raises a signal it caught a moment
        // later: a repeat within 250 ms is that echo, not a person pressing Ctrl+C again.
        const repeat = firstSignalAt !== undefined && deps.now() - firstSignalAt > 250;
        firstSignalAt ??= deps.now();
        for (const wait of waits) wait.abort();
        waits.clear();
        if (repeat && signal === 'SIGINT') {
          reporter.stop();
          deps.stderr.write(
            'extract: interrupted again: exiting now; the journal is valid, rerun the same command to resume\n',
          );
          deps.exitNow?.(130);
          return;
        }
        const stopping = `${signal}: no further submissions; recording what is known`;
        // Only a second SIGINT exits at once (above).
        halt(
          'interrupted',
          stopping,
          signal === 'SIGINT' ? `${stopping} (press Ctrl+C again to exit at once)` : undefined,
        );
      });
    },
  };
}
