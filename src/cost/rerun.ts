import { rerunOf } from './attempt.ts';
import { chargeOf, type FailedFactCost, type FailureCharge } from './charge.ts';

/** How a document was sent, or how its answer came (a record's and a journal fact's `route`). */
export const DOCUMENT_ROUTES = ['inline', 'upload', 'inline->upload', 'webhook', 'fetch'] as const;
export type Route = (typeof DOCUMENT_ROUTES)[number];

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
 *   (in flight when its run ended, answer lost), or the service judged the document (unreadable,
 *   ended in error); reported, not sent without --retry-failed
 */
export type Action = 'submit' | 'resume' | 'done' | 'leave';

/**
 * What an earlier run knew of a document, as far as these decisions read it: the fields of the
 * journal's facts (journal/journal.ts KnownState, which is assignable to it) that they use, so
 * that cost/ imports nothing of journal/. `R` is the request as the journal keeps it.
 */
export type Prior<R = unknown> =
  | { fact: 'completed'; document_id: string; page_count: number | null }
  | { fact: 'submitted'; document_id: string; route: Route; page_count?: number | null | undefined }
  | { fact: 'sending'; request?: R | undefined; counted?: Counted | undefined }
  | (FailedFactCost & {
      route: Route | null;
      retryable: boolean;
      request?: R | undefined;
      counted?: Counted | undefined;
    });

/** A document whose pages a run counted as charged (the journal's `counted`). */
export type Counted = { document_id: string; page_count: number };

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

export function rerunAction(prior: Prior | undefined, flags: RerunFlags): Action {
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
      if (flags.retryFailed || rerunOf({ charge: chargeOf(prior), retryable: prior.retryable }) === 'on-rerun')
        return 'submit';
      return 'leave';
    case 'sending':
      return flags.retryFailed ? 'submit' : 'leave';
  }
}

/**
 * The request to send again, unchanged and under its Idempotency-Key, when a document is
 * submitted after an earlier run sent it without learning its outcome; --fresh sends anew.
 */
export function resendOf<R>(prior: Prior<R> | undefined, action: Action, fresh = false): R | undefined {
  return action === 'submit' && !fresh ? uncertainRequest(prior) : undefined;
}

/** The request an earlier run sent without learning its outcome, if any. */
export function uncertainRequest<R>(prior: Prior<R> | undefined): R | undefined {
  return prior?.fact === 'sending' || prior?.fact === 'failed' ? prior.request : undefined;
}

/**
 * The document an earlier run got a document_id for but no result it could keep: submitted and
 * not collected, or charged with an answer the client refused (too deep, a bad page_count).
 * A rerun fetches it by its id (GET), never sends it again.
 */
export function fetchable(
  prior: Prior | undefined,
): { document_id: string; route: Route; page_count?: number | null | undefined } | undefined {
  if (prior?.fact === 'submitted') return prior;
  if (prior?.fact === 'failed' && prior.document_id !== null && prior.route !== null && chargeOf(prior) === 'uncertain')
    return { document_id: prior.document_id, route: prior.route, page_count: countedOf(prior, prior.document_id) };
  return undefined;
}

/**
 * The document of this content whose pages an earlier run counted in its "pages charged", as
 * far as the journal knows: a completion or a submission that kept its page count, or the
 * `counted` a later fact carried on (a resend's `sending`, a failure). A service that answers
 * a resend (--fresh, --retry-failed: the same Idempotency-Key) with this document_id charged
 * nothing more, so the run counts its pages as recognised, not charged.
 */
export function countedEarlier(prior: Prior | undefined): Counted | undefined {
  if (prior === undefined) return undefined;
  if (prior.fact === 'completed' || prior.fact === 'submitted') {
    const pages = prior.page_count;
    return pages === undefined || pages === null ? undefined : { document_id: prior.document_id, page_count: pages };
  }
  return prior.counted;
}

/** The pages counted of this document, if it is the one counted. */
function countedOf(prior: Prior, documentId: string): number | undefined {
  const counted = countedEarlier(prior);
  return counted?.document_id === documentId ? counted.page_count : undefined;
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
  return rerunOf(failure) === 'with-retry-failed' && failure.charge !== 'uncertain';
}

/** What the journal knew of a document says it was set aside by an earlier run. */
export function setAsideEarlier(prior: Prior | undefined): boolean {
  return prior?.fact === 'failed' && failsAgain({ charge: chargeOf(prior), retryable: prior.retryable });
}
