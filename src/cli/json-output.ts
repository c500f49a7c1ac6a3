import type { ReportEntry, BatchSummary } from '../batch/summary.ts';
import { ExtractError } from '../errors.ts';
import { recordFields } from '../outputs/record.ts';
import { discarded } from '../outputs/stream.ts';
import { needsReview } from '../outputs/review.ts';
import type { RunEvent, RunSummary } from '../outputs/json-shapes.ts';
import { isUrl, shownUrl } from '../inputs/remote.ts';

const shownInput = (input: string): string => (isUrl(input) ? shownUrl(input) : input);

/**
 * `--json`: what the CLI prints for scripts instead of people's text. The shapes are
 * outputs/json-shapes.ts (zod, docs/json.md); this module only builds and writes them, and loads
 * no zod (types only). stdout carries JSON alone in this mode; stderr keeps people's lines.
 */

type Out = { write(text: string): unknown };

/**
 * The NDJSON events of a run or a watcher, written to `out` as they happen: started, a record
 * per document as it ends, then the summary (a run) or stopped (a watcher).
 */
export function runEvents(out: Out) {
  const emit = (event: RunEvent): void => void out.write(`${JSON.stringify(event)}\n`);
  return {
    started: (command: 'extract' | 'extract watch', version: string, inputs: string[], now: Date): void =>
      // A URL as every output shows it: no user:password, no presigned query (its signature).
      emit({ event: 'started', command, version, inputs: inputs.map(shownInput), at: now.toISOString() }),
    // needs_review as every output writes it (outputs/record.ts recordFields), the run's facts after.
    record: (entry: ReportEntry): void =>
      emit({ event: 'record', record: { ...recordFields(entry), ...entry, needs_review: needsReview(entry) } }),
    summary: (summary: BatchSummary): void => emit({ event: 'summary', summary: runSummary(summary) }),
    stopped: (exitCode: number): void => emit({ event: 'stopped', exit_code: exitCode }),
  };
}

/**
 * The summary's counts, read field by field: its two per-document lists are getters that read
 * the run's records again (batch/summary.ts), which the record events already gave.
 */
function runSummary(s: BatchSummary): RunSummary {
  return {
    exit_code: s.exit_code,
    completed: s.completed,
    failed: s.failed,
    known_failures: s.known_failures,
    skipped: s.skipped,
    pending: s.pending,
    not_submitted: s.not_submitted,
    not_documents: s.not_documents,
    links_not_followed: s.links_not_followed,
    hidden: s.hidden,
    still_changing: s.still_changing,
    other_workers: s.other_workers,
    pages_charged: s.pages_charged,
    pages_recognised: s.pages_recognised,
    pages_refunded: s.pages_refunded,
    pages_unknown_documents: s.pages_unknown_documents,
    ...(s.pages_counted_by_client !== undefined && { pages_counted_by_client: s.pages_counted_by_client }),
    stopped_by: s.stopped_by,
    message: s.message,
    elapsed_ms: s.elapsed_ms,
    dry_run: s.dry_run,
    credits_estimate: s.credits_estimate,
  };
}

/**
 * A run's or a watcher's events on process.stdout, which nothing else may then write: a flag
 * that would send its stream there too (`--report -`, `-o -`) is refused. The run's own stdout
 * (records streamed there without -o, a dry run's plan) goes nowhere: the events say it.
 */
export function eventsOnStdout(sharing: ReadonlyArray<readonly [flag: string, path: string | undefined]>) {
  for (const [flag, path] of sharing)
    if (path === '-')
      throw new ExtractError(
        'usage',
        `--json writes its events to stdout, and ${flag} - would share it: write ${flag} to a file, or drop --json`,
      );
  return { ...runEvents(process.stdout), stdout: discarded() };
}
