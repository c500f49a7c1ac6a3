import { chargeOf, type FailureCharge, type KnownState } from './journal.ts';

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
