import { indentJson } from '../outputs/json.ts';
import type { DocumentRecord } from '../outputs/record.ts';
import { needsReview, reviewEntry, type ReviewEntry } from '../outputs/review.ts';
import { EXIT_CODES } from '../errors.ts';
import type { Charges, StopReason } from './outcome.ts';
import type { LinkNotFollowed } from './discover.ts';
import { formatDuration } from '../ui/format.ts';
import {
  type EntryOutcome,
  isKnownFailure,
  markedKnownFailure,
  markedOutcome,
  markedReview,
  OUTCOME_MARKS,
  type Marked,
} from './outcome-marks.ts';

/** A file the run leaves out: not a document (skipped, uncharged), with its detected type. */
export type IgnoredInput = { file: string; realPath: string; mimeType: string };

/** A file still arriving, left for a later run; `reason` is set for a partial download, left by its name whatever --settle says. */
export type Unsettled = { file: string; changed_ms_ago: number; reason?: 'partial download' | undefined };

export type { EntryOutcome } from './outcome-marks.ts';

export type ReportEntry = DocumentRecord & {
  outcome: EntryOutcome;
  sha256: string | null;
  pages_estimate?: number | undefined;
  /** `client`: its page_count is extract's own count, the service giving none. */
  pages_counted_by?: 'client' | undefined;
  /**
   * A failure that will fail the same way again (cost/rerun.ts failsAgain): new on the run that meets it
   * (outcome failed), known afterwards (outcome left), which then does not fail the run.
   */
  set_aside?: true | undefined;
  /** Where --move-done/--move-failed put the file. */
  moved_to?: string | undefined;
  /** Why the file was not moved (it stays where it was). */
  move_error?: string | undefined;
};

export type BatchSummary = {
  exit_code: number;
  completed: number;
  failed: number;
  /** Of `failed`: failures set aside by an earlier run (outcome left, set_aside), which do not fail this one. */
  known_failures: number;
  skipped: number;
  pending: number;
  not_submitted: number;
  /** Files found in directories or by patterns that are not documents (not PDF, not an image): skipped, uncharged. */
  not_documents: Array<{ file: string; type: string }>;
  /** Symbolic links a walk left out because they lead out of the folder walked (--follow-links follows them). */
  links_not_followed: Array<{ file: string; target: string; reason: string }>;
  /** Hidden files and folders a walk left out (a folder ends with `/`): skipped, uncharged; --hidden includes them. */
  hidden: string[];
  /** Files changed within --settle (still being written?): not sent, left for the next run. */
  still_changing: Unsettled[];
  /** Completed during this run by other workers sharing the journal (postgres://). */
  other_workers: number;
  /**
   * What this run caused the service to charge: pages reserved (documents completed, failed
   * or still pending) less the refunds it saw. Summed over the runs of a batch: the ledger.
   */
  pages_charged: number;
  /**
   * Pages of documents the service answered this run's resends with (--fresh, --retry-failed:
   * the same Idempotency-Key) that an earlier run had counted: charged once, so not in
   * `pages_charged`.
   */
  pages_recognised: number;
  /** Refunds this run saw (documents that ended in error), already taken off pages_charged. */
  pages_refunded: number;
  /** Documents this run may have had charged but whose pages it could not learn; a rerun counts them. */
  pages_unknown_documents: number;
  /** Of `pages_charged`: pages extract counted itself, the service giving no page count (absent: none). */
  pages_counted_by_client?: number | undefined;
  stopped_by: StopReason | null;
  message: string | null;
  elapsed_ms: number;
  dry_run: boolean;
  /** --dry-run: the credits the run would cost. */
  credits_estimate: number | null;
  /** Completed documents with a null in their results, for a person (the shape of `extract listen`'s review.jsonl). */
  needs_review: ReviewEntry[];
  documents: ReportEntry[];
};

/**
 * The summary of a run over its records, in input order. Counted in one pass; the two lists
 * that hold a line per document (`documents`, `needs_review`) are read from the records again
 * only when asked for (the report streams them: reportChunks), so a run over 100,000
 * documents holds counters, not its records. `documents` is iterated again
 * at each reading: records.ts's view of the run's records does that.
 */
export function tallySummary(
  documents: Iterable<ReportEntry>,
  extra: {
    stoppedBy: StopReason | null;
    message: string | null;
    elapsedMs: number;
    dryRun: boolean;
    charges: Charges;
    ignored?: IgnoredInput[];
    linksNotFollowed?: LinkNotFollowed[];
    hidden?: string[] | undefined;
    unsettled?: Unsettled[] | undefined;
    /** Frees what `documents` is read from (the run's record spool): releaseSummary. */
    release?: () => void;
  },
): BatchSummary {
  const counts = countOutcomes(documents);
  const count = (...outcomes: EntryOutcome[]): number =>
    outcomes.reduce((n, o) => n + (counts.outcomes.get(o) ?? 0), 0);
  const reviewOf = function* (): Generator<ReviewEntry> {
    for (const d of documents) {
      const entry = reviewEntry(d);
      if (entry !== undefined) yield entry;
    }
  };
  let documentList: ReportEntry[] | undefined;
  let reviewList: ReviewEntry[] | undefined;
  const summary: BatchSummary = {
    exit_code: 0,
    completed: count('completed'),
    failed: count('failed', 'left', 'unreadable'),
    known_failures: counts.knownFailures,
    skipped: count('skipped'),
    pending: count('pending'),
    not_submitted: count('not_submitted'),
    not_documents: (extra.ignored ?? []).map((x) => ({ file: x.file, type: x.mimeType })),
    links_not_followed: (extra.linksNotFollowed ?? []).map((l) => ({
      file: l.file,
      target: l.target,
      reason: l.reason,
    })),
    hidden: extra.hidden ?? [],
    still_changing: extra.unsettled ?? [],
    other_workers: count('other_worker'),
    pages_charged: extra.charges.reserved - extra.charges.refunded,
    pages_recognised: extra.charges.recognised,
    pages_refunded: extra.charges.refunded,
    pages_unknown_documents: extra.charges.unknown,
    ...((extra.charges.byClient ?? 0) > 0 ? { pages_counted_by_client: extra.charges.byClient } : {}),
    stopped_by: extra.stoppedBy,
    message: extra.message,
    elapsed_ms: extra.elapsedMs,
    dry_run: extra.dryRun,
    credits_estimate: extra.dryRun ? counts.creditsEstimate : null,
    get needs_review(): ReviewEntry[] {
      reviewList ??= [...reviewOf()];
      return reviewList;
    },
    get documents(): ReportEntry[] {
      documentList ??= [...documents];
      return documentList;
    },
  };
  summary.exit_code = exitCodeOf(summary);
  tallies.set(summary, { counts, documents: () => documents, needsReview: reviewOf, release: extra.release });
  return summary;
}

/** What tallySummary counted, and where its lists are read from. */
type Tally = {
  counts: Counts;
  documents: () => Iterable<ReportEntry>;
  needsReview: () => Iterable<ReviewEntry>;
  release: (() => void) | undefined;
};
type Counts = {
  outcomes: Map<EntryOutcome, number>;
  knownFailures: number;
  /** Outcome left, not set aside: failed earlier in a way a plain rerun does not repeat. */
  leftNotKnown: number;
  needsReview: number;
  creditsEstimate: number;
};
/** Kept beside each summary, not in it: the summary is the report's JSON. */
const tallies = new WeakMap<BatchSummary, Tally>();

/**
 * Frees the records a summary's lists are read from (the run's spool file). A caller that keeps
 * running after a batch (extract watch, a cycle after another) releases each summary once done
 * with it; a one-off run leaves it to the process's exit. Its lists are not readable after,
 * unless they were read before.
 */
export function releaseSummary(summary: BatchSummary): void {
  tallies.get(summary)?.release?.();
}

function countOutcomes(documents: Iterable<ReportEntry> & Marked): Counts {
  const counts: Counts = { outcomes: new Map(), knownFailures: 0, leftNotKnown: 0, needsReview: 0, creditsEstimate: 0 };
  const marks = documents[OUTCOME_MARKS]?.();
  if (marks !== undefined) {
    // The records' marks, kept as they were emitted: counted without reading a record.
    for (const mark of marks) {
      const outcome = markedOutcome(mark);
      counts.outcomes.set(outcome, (counts.outcomes.get(outcome) ?? 0) + 1);
      if (markedKnownFailure(mark)) counts.knownFailures++;
      else if (outcome === 'left') counts.leftNotKnown++;
      if (markedReview(mark)) counts.needsReview++;
    }
    return counts;
  }
  for (const d of documents) {
    counts.outcomes.set(d.outcome, (counts.outcomes.get(d.outcome) ?? 0) + 1);
    if (isKnownFailure(d)) counts.knownFailures++;
    else if (d.outcome === 'left') counts.leftNotKnown++;
    if (needsReview(d) === true) counts.needsReview++;
    if (d.outcome === 'planned') counts.creditsEstimate += d.pages_estimate ?? 0;
  }
  return counts;
}

/** The counts summaryLines needs, from the tally when there is one (else from the lists: a summary made by hand). */
function countsOf(s: BatchSummary): Pick<Counts, 'leftNotKnown' | 'needsReview'> & { planned: number } {
  const counts = tallies.get(s)?.counts ?? countOutcomes(s.documents);
  return { ...counts, planned: counts.outcomes.get('planned') ?? 0 };
}

/**
 * The report (--report) as text, in chunks: the same as `JSON.stringify(summary, null, 2)` and a
 * newline, its two lists written a line per entry as they are read from the records, never
 * held whole.
 */
export function* reportChunks(summary: BatchSummary): Generator<string> {
  const tally = tallies.get(summary);
  if (tally === undefined) {
    yield `${JSON.stringify(summary, null, 2)}\n`;
    return;
  }
  const lists: Record<string, () => Iterable<unknown>> = {
    needs_review: tally.needsReview,
    documents: tally.documents,
  };
  // The lists' places marked by a value no other field holds, then written where the marks are.
  const plain: Record<string, unknown> = {};
  for (const key of Object.keys(summary))
    plain[key] = key in lists ? LIST_MARK : (summary as unknown as Record<string, unknown>)[key];
  const text = JSON.stringify(plain, null, 2);
  let from = 0;
  for (const [key, list] of Object.entries(lists)) {
    const mark = `\n  ${JSON.stringify(key)}: ${JSON.stringify(LIST_MARK)}`;
    const at = text.indexOf(mark, from);
    if (at < 0) throw new Error(`reportChunks: ${key} not found in the summary`);
    const open = at + mark.length - JSON.stringify(LIST_MARK).length;
    yield text.slice(from, open);
    yield* arrayChunks(list());
    from = at + mark.length;
  }
  yield `${text.slice(from)}\n`;
}

/** The records an entry at a time, read again from the run's records (not the summary's list, which would hold them all). */
export function documentEntries(summary: BatchSummary): Iterable<ReportEntry> {
  return tallies.get(summary)?.documents() ?? summary.documents;
}

/** The review list (--review) an entry at a time, read from the records (not the summary's list, which would hold them all). */
export function reviewEntries(summary: BatchSummary): Iterable<ReviewEntry> {
  return tallies.get(summary)?.needsReview() ?? summary.needs_review;
}

const LIST_MARK = '\u0000extract: a list written in its place\u0000';

/** A list of a top-level field as JSON.stringify(…, null, 2) writes it, an entry at a time. */
function* arrayChunks(entries: Iterable<unknown>): Generator<string> {
  let first = true;
  for (const entry of entries) {
    yield `${first ? '[\n' : ',\n'}${indentJson(JSON.stringify(entry, null, 2), '    ')}`;
    first = false;
  }
  yield first ? '[]' : '\n  ]';
}

/**
 * One exit code for the run (README: "Exit codes"). A stop outranks the documents' outcomes (it is what the user
 * must act on first); a failure outranks "pending", which a plain rerun resolves. Failures an earlier
 * run set aside are known, not new: reported every run, they fail none after the first.
 */
export function exitCodeOf(
  s: Pick<BatchSummary, 'stopped_by' | 'failed' | 'pending' | 'not_submitted'> &
    Partial<Pick<BatchSummary, 'known_failures'>>,
  outputFailed = false,
): number {
  if (s.stopped_by === 'interrupted') return EXIT_CODES.interrupted;
  if (s.stopped_by === 'auth') return EXIT_CODES.auth;
  if (s.stopped_by === 'out_of_credits') return EXIT_CODES.out_of_credits;
  if (s.stopped_by === 'unreachable') return EXIT_CODES.unreachable;
  if (s.stopped_by === 'wrong_service') return EXIT_CODES.usage;
  if (s.stopped_by === 'journal') return EXIT_CODES.state;
  // Results are kept but not where they were asked for: that comes before the documents' outcomes.
  if (outputFailed) return EXIT_CODES.output;
  if (s.failed - (s.known_failures ?? 0) > 0 || s.not_submitted > 0) return EXIT_CODES.failed;
  if (s.pending > 0) return EXIT_CODES.pending;
  return EXIT_CODES.ok;
}

/** A run stopped before the service answered anything: nothing submitted, charged or settled. */
export function neverAnswered(s: BatchSummary): boolean {
  return (
    (s.stopped_by === 'unreachable' || s.stopped_by === 'wrong_service') &&
    s.completed + s.failed + s.pending === 0 &&
    s.pages_charged === 0 &&
    s.pages_unknown_documents === 0
  );
}

/** The lines printed on stderr at the end of a run. */
export function summaryLines(s: BatchSummary, resumeHint: boolean): string[] {
  if (s.dry_run) {
    const { planned } = countsOf(s);
    return [
      `dry run: ${planned} document${planned === 1 ? '' : 's'} would be sent, costing about ${s.credits_estimate ?? 0} credit${s.credits_estimate === 1 ? '' : 's'}; ${s.skipped} already completed, ${s.pending} to resume; nothing was submitted`,
    ];
  }
  const parts = [
    `${s.completed} completed`,
    s.known_failures > 0 ? `${s.failed} failed (${s.known_failures} known from earlier runs)` : `${s.failed} failed`,
    `${s.skipped} skipped (completed earlier)`,
    `${s.pending} still pending`,
  ];
  if (s.not_submitted > 0) parts.push(`${s.not_submitted} not submitted`);
  if (s.not_documents.length > 0) parts.push(`${s.not_documents.length} not documents (skipped, uncharged)`);
  if (s.hidden.length > 0) parts.push(`${s.hidden.length} hidden (skipped, uncharged; --hidden includes them)`);
  if (s.still_changing.length > 0) parts.push(`${s.still_changing.length} still changing (left for the next run)`);
  if (s.other_workers > 0) parts.push(`${s.other_workers} completed by other workers`);
  const counted = countsOf(s);
  if (counted.needsReview > 0) parts.push(`${counted.needsReview} with null fields to review`);
  const refunds = s.pages_refunded > 0 ? ` (after ${s.pages_refunded} refunded)` : '';
  const recognised = s.pages_recognised > 0 ? `, ${s.pages_recognised} recognised (no charge)` : '';
  const byClient = s.pages_counted_by_client ?? 0;
  const counter =
    byClient > 0
      ? ` (${byClient === s.pages_charged ? '' : `${byClient} of them `}counted by extract: the service gives no page count)`
      : '';
  const lines = [
    `${parts.join(', ')}; ${s.pages_charged} page${Math.abs(s.pages_charged) === 1 ? '' : 's'} charged${counter}${refunds}${recognised} in ${formatDuration(s.elapsed_ms)}`,
  ];
  if (s.pages_unknown_documents > 0) {
    const n = s.pages_unknown_documents;
    lines.push(
      `${n} document${n === 1 ? '' : 's'} may have been charged pages not counted above (no page count known yet); the run that learns them counts them`,
    );
  }
  if (s.message) lines.push(s.message);
  if (s.pending > 0 || s.not_submitted > 0) {
    // A rejected key or a wrong base URL is not resumed by rerunning as it is: it needs the fix first.
    const fixFirst =
      s.stopped_by === 'auth' ? 'the API key' : s.stopped_by === 'wrong_service' ? 'the base URL' : undefined;
    lines.push(
      !resumeHint
        ? 'no journal was kept (--no-state, or --local without --state): a rerun sends every file again'
        : fixFirst !== undefined
          ? `fix ${fixFirst}, then rerun the same command: completed documents are skipped and submitted ones are collected, not paid again`
          : 'rerun the same command to resume: completed documents are skipped and submitted ones are collected, not paid again',
    );
  }
  const left = counted.leftNotKnown;
  if (s.known_failures > 0) {
    const n = s.known_failures;
    lines.push(
      `${n} document${n === 1 ? '' : 's'} failed in an earlier run in a way that fails again (the service judged ${n === 1 ? 'it' : 'them'}, or no password opened ${n === 1 ? 'it' : 'them'}): ` +
        `set aside, listed in the report and "extract status", not sent again and not failing this run; --retry-failed sends ${n === 1 ? 'it' : 'them'} again (a locked PDF: add its password to --password-file)`,
    );
  }
  if (left > 0) {
    lines.push(
      `${left} document${left === 1 ? '' : 's'} failed in an earlier run in a way a plain rerun does not repeat (it may have been charged, or the service ` +
        `judged the document): check ${left === 1 ? 'it' : 'them'} in the report, then add --retry-failed to send ${left === 1 ? 'it' : 'them'} again`,
    );
  }
  return lines;
}
