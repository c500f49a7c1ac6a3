import type { FailureCharge } from '../cost/charge.ts';
import type { DocumentRecord } from '../outputs/record.ts';
import type { FileStamp } from './discover.ts';

// How a run's documents ended and what they cost: what the send step makes and the finish step reads.

/** Why a run stopped submitting before every file was sent. */
export type StopReason =
  | 'out_of_credits'
  | 'auth'
  | 'interrupted'
  | 'max_credits'
  | 'unreachable'
  | 'wrong_service'
  | 'journal';

/**
 * The pages a run caused the service to charge: reserves it learned of, less the refunds it
 * saw. A document's pages are counted once over all runs: by the run that first learns its
 * page count (the journal's `submitted` fact keeps it when a run ends with the document
 * still processing), so summed over the runs of a batch this equals the service's ledger.
 * `unknown`: documents this run may have had charged whose pages it could not learn (an
 * answer lost, a run stopped before the first poll); the run that learns them counts them.
 * `recognised`: pages of documents the service answered a resend with that an earlier run
 * had counted (the same document_id: charged once, counted once), not in `reserved`.
 */
export type Charges = {
  reserved: number;
  refunded: number;
  unknown: number;
  recognised: number;
  /** Of `reserved`: pages the client counted itself, the service giving none (absent: 0). */
  byClient?: number;
};

/**
 * How one document ended in this run:
 * - completed / failed: the service said so (or the file could not be sent)
 * - pending: submitted, still processing at the deadline or when the run stopped; a rerun resumes it
 * - not_submitted: never sent, because the run stopped (402, auth, signal, --max-credits); a rerun sends it
 */
type OutcomeKind = 'completed' | 'failed' | 'pending' | 'not_submitted';
/** `failure`: what a failed fact of this run says (absent for a failure an earlier run recorded). */
export type Outcome = {
  kind: OutcomeKind;
  record: DocumentRecord;
  failure?: { retryable: boolean; charge: FailureCharge };
  /** The stat of the descriptor its bytes were sent from (absent: this run did not read it to send it). */
  read?: FileStamp | undefined;
  /** `client`: the service gave no page count; the record's is the client's own (batch/plan/pages.ts). */
  pagesCountedBy?: 'client' | undefined;
};
