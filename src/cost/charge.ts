/**
 * What a call to the service cost, as far as this client can know: one type for the client's
 * errors, the pipeline's outcomes, the journal's failed facts, `extract status` and the report.
 * Only POST extract reserves credits, so every other step costs nothing, whatever its answer.
 *
 * - none: the service created no document (nothing was sent, or the service refused it before
 *   any work: a 4xx, a 429, or its own 500 with a JSON error body, refunded per the spec)
 * - refunded: the service created the document, which ended in error; its reserve came back
 * - uncertain: possibly charged: the request may have reached the service and its answer was
 *   lost (a dropped connection, a proxy's 502/504 or non-JSON 500, an unreadable 2xx)
 * - charged: the service answered with a document: its pages are reserved
 *
 * "uncertain" is the possible charge; it keeps the name every journal since the first has
 * written, so journals on disk read the same and need no mapping.
 */
export const CHARGES = ['none', 'refunded', 'uncertain', 'charged'] as const;
export type Charge = (typeof CHARGES)[number];

/**
 * The charges a failed fact is written with. A failure is never plainly `charged`: a document
 * the service made whose answer this client could not take is `uncertain` (fetched by its id).
 */
export const FAILURE_CHARGES = ['none', 'uncertain', 'refunded'] as const satisfies readonly Charge[];
export type FailureCharge = (typeof FAILURE_CHARGES)[number];

/**
 * The fields of the journal's failed fact that its cost is read from. Narrowed here, not
 * imported, so that cost/ imports nothing of journal/ (journal/ asks cost/); the journal passes
 * its own facts to chargeOf, costNothing and cost/rerun.ts, so tsc checks they still fit.
 */
export type FailedFactCost = {
  fact: 'failed';
  charge?: FailureCharge | undefined;
  request?: unknown;
  document_id: string | null;
};

/**
 * What a failure cost. Journals of format 1 did not write `charge`: their `request` was always
 * kept when the outcome was uncertain, and a document_id without one meant the document ended
 * in error and was refunded.
 */
export function chargeOf(fact: FailedFactCost): FailureCharge {
  if (fact.charge !== undefined) return fact.charge;
  if (fact.request !== undefined) return 'uncertain';
  return fact.document_id !== null ? 'refunded' : 'none';
}

/**
 * Why an extract request's outcome is not known (its charge `uncertain`), in the words of
 * `extract status --uncertain`. A run writes the first three on its failed fact; the others
 * `status` reads from the journal around a `sending` fact that nothing followed.
 * - gateway: a proxy answered for the service (502, 504, a 500 that is not the service's own)
 * - connection: no answer: the connection dropped, or timed out, after the request went out
 * - answer_refused: the service answered 2xx with something this client could not take
 * - in_flight: a run working on the journal now has it out (its worker is alive)
 * - journal_unwritable: the run got on but could not write what came of it (a full disk)
 * - run_ended: the run that sent it ended before it could write the outcome (killed, crashed,
 *   power lost)
 */
export const UNCERTAIN_CAUSES = [
  'gateway',
  'connection',
  'answer_refused',
  'in_flight',
  'journal_unwritable',
  'run_ended',
] as const;
export type UncertainCause = (typeof UNCERTAIN_CAUSES)[number];

/** Whether an extract request that failed with this charge left no document at the service (journal: `unsent`). */
export function createdNothing(charge: Charge): boolean {
  return charge === 'none';
}

/**
 * A journal state that records a failure which left nothing at the service: the replay lets it
 * erase nothing an earlier run learned (journal.ts applyFact).
 */
export function costNothing(state: { fact: string } | FailedFactCost | undefined): boolean {
  return state !== undefined && isFailed(state) && createdNothing(chargeOf(state));
}

function isFailed(state: { fact: string } | FailedFactCost): state is FailedFactCost {
  return state.fact === 'failed';
}

/** How a document's failure came about, as the pipeline saw it. */
export type FailureCase =
  /**
   * The service's document ended in error and its reserve was refunded: polled (GET said so),
   * the service judged the document and a rerun sets it aside; answered at once (an inline
   * `success: false`), the extraction failed and may pass: a plain rerun sends it once more
   * (`again`: this was that once more).
   */
  | { ended: 'refunded'; answered?: { again: boolean } | undefined }
  /** A 2xx the client could not take that still named its document: the service made it. */
  | { ended: 'answer-refused' }
  /**
   * Any other failure: `retryable` as the service's answer said (undefined: no answer of the
   * service's, such as a local error, which may pass next time), `requestInDoubt` when the extract
   * request may have reached the service unanswered (kept for --retry-failed), `documentId` when
   * the service had named the document.
   */
  | { ended: 'error'; retryable: boolean | undefined; requestInDoubt: boolean; documentId: string | null };

/** What a failed fact says: may the same document pass on a later try, and what did it cost. */
export function failureOutcome(c: FailureCase): { retryable: boolean; charge: FailureCharge } {
  switch (c.ended) {
    case 'refunded':
      return { retryable: c.answered !== undefined && !c.answered.again, charge: 'refunded' };
    case 'answer-refused':
      return { retryable: false, charge: 'uncertain' };
    case 'error':
      return {
        retryable: c.retryable ?? true,
        charge: c.requestInDoubt || c.documentId !== null ? 'uncertain' : 'none',
      };
  }
}
