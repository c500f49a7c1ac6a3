import type { DocumentRecord } from '../outputs/record.ts';
import { EXIT_CODES } from '../errors.ts';
import type { StopReason } from './pipeline.ts';
import { formatDuration } from './units.ts';

/**
 * Where each input ended, for the summary and --report:
 * completed (this run), skipped (completed by an earlier run), failed (this run),
 * left (failed earlier, not retried without --retry-failed), unreadable, pending,
 * not_submitted, planned (--dry-run), other_worker (completed during this run by another
 * worker sharing the journal).
 */
export type EntryOutcome = 'completed' | 'skipped' | 'failed' | 'left' | 'unreadable' | 'pending' | 'not_submitted' | 'planned' | 'other_worker';

export type ReportEntry = DocumentRecord & { outcome: EntryOutcome; sha256: string | null; pages_estimate?: number | undefined };

export type BatchSummary = {
  exitCode: number;
  completed: number;
  failed: number;
  skipped: number;
  pending: number;
  not_submitted: number;
  /** Completed during this run by other workers sharing the journal (postgres://). */
  other_workers: number;
  /** Pages of the documents completed in this run (what this run cost). */
  pages_charged: number;
  stopped_by: StopReason | null;
  message: string | null;
  elapsed_ms: number;
  dry_run: boolean;
  /** --dry-run: the credits the run would cost. */
  credits_estimate: number | null;
  documents: ReportEntry[];
};

export function tallySummary(
  documents: ReportEntry[],
  extra: { stoppedBy: StopReason | null; message: string | null; elapsedMs: number; dryRun: boolean },
): BatchSummary {
  const count = (...outcomes: EntryOutcome[]): number => documents.filter((d) => outcomes.includes(d.outcome)).length;
  // Copies of one content are one document, charged once.
  const charged = new Map<string, number>();
  for (const d of documents) if (d.outcome === 'completed') charged.set(d.sha256 ?? d.file, d.page_count ?? 0);
  const pages = [...charged.values()].reduce((sum, n) => sum + n, 0);
  const summary: BatchSummary = {
    exitCode: 0,
    completed: count('completed'),
    failed: count('failed', 'left', 'unreadable'),
    skipped: count('skipped'),
    pending: count('pending'),
    not_submitted: count('not_submitted'),
    other_workers: count('other_worker'),
    pages_charged: pages,
    stopped_by: extra.stoppedBy,
    message: extra.message,
    elapsed_ms: extra.elapsedMs,
    dry_run: extra.dryRun,
    credits_estimate: extra.dryRun ? documents.reduce((s, d) => s + (d.outcome === 'planned' ? (d.pages_estimate ?? 0) : 0), 0) : null,
    documents,
  };
  summary.exitCode = exitCodeOf(summary);
  return summary;
}

/**
 * One exit code for the run. A stop outranks the documents' outcomes (it is what the user
 * must act on first); a failure outranks "pending", which a plain rerun resolves.
 */
export function exitCodeOf(s: Pick<BatchSummary, 'stopped_by' | 'failed' | 'pending' | 'not_submitted'>): number {
  if (s.stopped_by === 'interrupted') return EXIT_CODES.interrupted;
  if (s.stopped_by === 'auth') return EXIT_CODES.auth;
  if (s.stopped_by === 'out_of_credits') return EXIT_CODES.out_of_credits;
  if (s.failed > 0 || s.not_submitted > 0) return EXIT_CODES.failed;
  if (s.pending > 0) return EXIT_CODES.pending;
  return EXIT_CODES.ok;
}

/** The lines printed on stderr at the end of a run. */
export function summaryLines(s: BatchSummary, resumeHint: boolean): string[] {
  if (s.dry_run) {
    const planned = s.documents.filter((d) => d.outcome === 'planned').length;
    return [`dry run: ${planned} document${planned === 1 ? '' : 's'} would be sent, costing about ${s.credits_estimate ?? 0} credits; ${s.skipped} already completed, ${s.pending} to resume; nothing was submitted`];
  }
  const parts = [
    `${s.completed} completed`,
    `${s.failed} failed`,
    `${s.skipped} skipped (completed earlier)`,
    `${s.pending} still pending`,
  ];
  if (s.not_submitted > 0) parts.push(`${s.not_submitted} not submitted`);
  if (s.other_workers > 0) parts.push(`${s.other_workers} completed by other workers`);
  const lines = [`${parts.join(', ')}; ${s.pages_charged} page${s.pages_charged === 1 ? '' : 's'} charged in ${formatDuration(s.elapsed_ms)}`];
  if (s.message) lines.push(s.message);
  if (resumeHint && (s.pending > 0 || s.not_submitted > 0)) lines.push('rerun the same command to resume: completed documents are skipped and submitted ones are collected, not paid again');
  const left = s.documents.filter((d) => d.outcome === 'left').length;
  if (left > 0) lines.push(`${left} document${left === 1 ? '' : 's'} failed in an earlier run and ${left === 1 ? 'was' : 'were'} not sent again: add --retry-failed to retry`);
  return lines;
}
