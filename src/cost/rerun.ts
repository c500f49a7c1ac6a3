import type { KnownState, SentRequest } from '../journal/journal.ts';
import type { Route } from '../outputs/record-schema.ts';
import { chargeOf, type FailureCharge } from './charge.ts';

/**
 * What a run does with a document the journal already knows: the other half of the decision
 * table (attempt.ts decides within a run, this between runs). Pure; plan.ts, the pipeline and
 * `extract status` ask it.
 */

/**
 * - submit: send it (new; failed earlier at no cost, e.g. the service was down; failed
 *   earlier and --retry-failed; or --fresh)
 * - resume: an earlier run submitted it; poll its document_id, never submit again
 * - done: completed earlier; its record comes from the journal
 * - leave: failed earlier in a way a plain rerun must not repeat: it may have been charged
 *   (in flight at a crash, answer lost), or the service judged the document (unreadable,
 *   ended in error); reported, not sent without --retry-failed
 */
export type Action = 'submit' | 'resume' | 'done' | 'leave';

export type RerunFlags = {
  retryFailed: boolean;
  /** --fresh: send every file again, whatever the journal knows. */
  fresh?: boolean | undefined;
  /**
   * The document's latest fact was written by another worker during this run: its outcome
   * stands whatever the flags (a completion is not redone, a submission is collected, a
   * failure or an uncertain send is reported, not sent a second time in the same batch).
   */
  concurrent?: boolean | undefined;
};

export function rerunAction(prior: KnownState | undefined, flags: RerunFlags): Action {
  if (prior === undefined) return 'submit';
  if (flags.concurrent === true) {
    if (prior.fact === 'completed') return 'done';
    if (prior.fact === 'submitted') return 'resume';
    return 'leave';
  }
  if (flags.fresh === true) return 'submit';
  switch (prior.fact) {
    case 'completed':
      return 'done';
    case 'submitted':
      return 'resume';
    case 'failed':
      // A document the service holds whose answer this client refused: asked for again, never paid for again.
      if (flags.retryFailed && fetchable(prior) !== undefined) return 'resume';
      // A failure that cost nothing and may pass next time (the service was down, rate
      // limiting, failing with its own 500) is retried without being asked: a cron job heals.
      if (flags.retryFailed || (prior.retryable && chargeOf(prior) === 'none')) return 'submit';
      return 'leave';
    case 'sending':
      return flags.retryFailed ? 'submit' : 'leave';
  }
}

/**
 * The request to send again, unchanged and under its Idempotency-Key, when a document is
 * submitted after an earlier run sent it without learning its outcome; --fresh sends anew.
 */
export function resendOf(prior: KnownState | undefined, action: Action, fresh = false): SentRequest | undefined {
  return action === 'submit' && !fresh ? uncertainRequest(prior) : undefined;
}

/** The request an earlier run sent without learning its outcome, if any. */
export function uncertainRequest(prior: KnownState | undefined): SentRequest | undefined {
  return prior?.fact === 'sending' || prior?.fact === 'failed' ? prior.request : undefined;
}

/**
 * The document an earlier run got a document_id for but no result it could keep: submitted and
 * not collected, or charged with an answer the client refused (too deep, a bad page_count).
 * A rerun fetches it by its id (GET), never sends it again.
 */
export function fetchable(
  prior: KnownState | undefined,
): { document_id: string; route: Route; page_count?: number | null | undefined } | undefined {
  if (prior?.fact === 'submitted') return prior;
  if (prior?.fact === 'failed' && prior.document_id !== null && prior.route !== null && chargeOf(prior) === 'uncertain')
    return { document_id: prior.document_id, route: prior.route };
  return undefined;
}

/**
 * A failure that will fail the same way again, so a plain rerun does not send the file and
 * does not call it new (README: Exit codes, new and known failures): the service judged the
 * document (refused it as it is: unreadable, too large, `rejected`; or it ended in error and
 * was refunded). A failure that may pass next time (the service down, a 429) is retried by a
 * rerun; one that may have been charged (`uncertain`) waits for a person's --retry-failed and
 * is reported as new by every run until then, since a plain rerun cannot settle it.
 */
export function failsAgain(failure: { charge: FailureCharge; retryable: boolean }): boolean {
  return failure.charge === 'refunded' || (failure.charge === 'none' && !failure.retryable);
}

/** What the journal knew of a document says it was set aside by an earlier run. */
export function setAsideEarlier(prior: KnownState | undefined): boolean {
  return prior?.fact === 'failed' && failsAgain({ charge: chargeOf(prior), retryable: prior.retryable });
}
