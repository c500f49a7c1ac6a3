import type { DocumentRecord } from '../outputs/record.ts';
import { needsReview } from '../outputs/review.ts';

/**
 * What the summary counts of a record, in one small number: its outcome, whether it is a
 * failure set aside earlier, whether it needs review. The run's records keep one beside each
 * record as it is emitted (records.ts), so the summary counts a batch without reading its
 * records back (a rerun's 100,000 records are otherwise read, parsed and dropped only to be counted).
 */
export type OutcomeMark = number;

const OUTCOMES = [
  'completed',
  'skipped',
  'failed',
  'left',
  'unreadable',
  'pending',
  'not_submitted',
  'planned',
  'other_worker',
] as const;

/**
 * Where each input ended, for the summary and --report:
 * completed (this run), skipped (completed by an earlier run), failed (this run),
 * left (failed earlier, not retried without --retry-failed), unreadable, pending,
 * not_submitted, planned (--dry-run), other_worker (completed during this run by another
 * worker sharing the journal).
 */
export type EntryOutcome = (typeof OUTCOMES)[number];

/** What a mark is made of: summary.ts's ReportEntry has these. */
type Marking = Pick<DocumentRecord, 'status' | 'results'> & { outcome: EntryOutcome; set_aside?: true | undefined };
const OUTCOME_BITS = 0b1111;
const KNOWN_FAILURE = 0b1_0000;
const REVIEW = 0b10_0000;

/** A failure an earlier run set aside (cost/rerun.ts failsAgain): reported, not failing the run. */
export function isKnownFailure(d: Pick<Marking, 'outcome' | 'set_aside'>): boolean {
  return d.outcome === 'left' && d.set_aside === true;
}

export function outcomeMark(d: Marking): OutcomeMark {
  return OUTCOMES.indexOf(d.outcome) | (isKnownFailure(d) ? KNOWN_FAILURE : 0) | (needsReview(d) === true ? REVIEW : 0);
}

export function markedOutcome(mark: OutcomeMark): EntryOutcome {
  return OUTCOMES[mark & OUTCOME_BITS] ?? 'failed';
}

export function markedKnownFailure(mark: OutcomeMark): boolean {
  return (mark & KNOWN_FAILURE) !== 0;
}

export function markedReview(mark: OutcomeMark): boolean {
  return (mark & REVIEW) !== 0;
}

/**
 * Records that can give each one's mark without being read: the summary counts those. Absent
 * or undefined (a record whose count needs more than its mark: a dry run's page estimate),
 * the summary reads the records.
 */
export const OUTCOME_MARKS = Symbol('outcome marks');
export type Marked = { [OUTCOME_MARKS]?: () => Iterable<OutcomeMark> | undefined };
