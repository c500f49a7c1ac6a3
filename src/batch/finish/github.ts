import { appendFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { closeFence } from './runner-fence.ts';
import type { Log } from '../../client/deps.ts';
import { inert, SERVICE_TEXT_MAX } from '../../inert.ts';
import { redact } from '../../redact.ts';
import type { ReviewEntry } from '../../outputs/review.ts';
import { documentEntries, reviewEntries, type BatchSummary, type ReportEntry } from '../summary.ts';

/**
 * Under GitHub Actions (GITHUB_ACTIONS=true): each document this run failed becomes an error
 * annotation on its file, each with null fields a warning, and the summary goes to the job's
 * page ($GITHUB_STEP_SUMMARY) as a table. Annotations are workflow commands on stderr (the
 * runner reads both streams; stdout is the records').
 */

/** At most this many annotations of a kind: GitHub shows ten per step; the rest are in the summary. */
const MAX_ANNOTATIONS = 50;
/** Rows of the step summary's lists, each. */
const MAX_ROWS = 100;
/**
 * GitHub refuses a step summary over 1 MiB (and then shows none): rows stop once the text
 * reaches this, whatever the names and reasons hold, with a line saying how many more there are.
 */
const SUMMARY_BUDGET = 512 * 1024;

export async function reportToGithub(
  summary: BatchSummary,
  env: Record<string, string | undefined>,
  stderr: { write(text: string): unknown },
  stdout: Writable,
  log: Log,
): Promise<void> {
  if (env.GITHUB_ACTIONS !== 'true' || summary.dry_run) return;
  // The records' fence on stdout ends before the annotations, which must be read as commands.
  await closeFence(stdout);
  for (const line of annotations(summary)) stderr.write(`${line}\n`);
  const path = env.GITHUB_STEP_SUMMARY;
  if (path === undefined || path === '') return;
  try {
    await appendFile(path, stepSummary(summary));
  } catch (err) {
    log(
      'warn',
      `the job summary ($GITHUB_STEP_SUMMARY) was not written: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

export function annotations(summary: BatchSummary): string[] {
  const failed = firstOf(documentEntries(summary), isFailed, MAX_ANNOTATIONS);
  const lines = failed.first.map(
    (d) => `::error file=${property(d.file)},title=extract::${data(shown(d.error ?? 'failed'))}`,
  );
  for (const r of firstOf(reviewEntries(summary), () => true, MAX_ANNOTATIONS).first)
    lines.push(
      `::warning file=${property(r.file_name)},title=extract: needs review::${data(shown(`null fields: ${r.null_fields.join(', ') || '(no results)'}`))}`,
    );
  return lines;
}

const isFailed = (d: ReportEntry): boolean => d.outcome === 'failed' || d.outcome === 'unreadable';

/**
 * The first `max` entries that pass `test`, and how many pass in all: read from the run's
 * records an entry at a time, so a batch of 100,000 under GitHub Actions holds at most `max`.
 */
function firstOf<T>(entries: Iterable<T>, test: (entry: T) => boolean, max: number): { first: T[]; count: number } {
  const first: T[] = [];
  let count = 0;
  for (const entry of entries)
    if (test(entry)) {
      count++;
      if (first.length < max) first.push(entry);
    }
  return { first, count };
}

export function stepSummary(s: BatchSummary): string {
  const review = firstOf<ReviewEntry>(reviewEntries(s), () => true, MAX_ROWS);
  const rows = [
    ['completed', s.completed],
    ['skipped (completed earlier)', s.skipped],
    ['failed', s.failed],
    ['still pending', s.pending],
    ['not submitted', s.not_submitted],
    ['with null fields to review', review.count],
    ['pages charged', s.pages_charged],
    // Pages of documents a resend was answered with that an earlier run counted: shown when there are some.
    ...(s.pages_recognised > 0 ? [['pages recognised (no charge)', s.pages_recognised]] : []),
  ];
  const out = ['## extract', '', '| | documents |', '|---|---:|', ...rows.map(([k, v]) => `| ${k} | ${v} |`), ''];
  const failed = firstOf(documentEntries(s), (d) => isFailed(d) || d.outcome === 'left', MAX_ROWS);
  if (failed.count > 0) {
    out.push('### Failed', '', '| file | error |', '|---|---|');
    const shownRows = rowsWithin(
      failed.first.map((d) => `| ${cell(d.file)} | ${cell(d.error ?? '')} |`),
      out,
    );
    if (failed.count > shownRows) out.push(`| … and ${failed.count - shownRows} more (see --report) | |`);
    out.push('');
  }
  if (review.count > 0) {
    out.push('### Needs review', '', '| file | null fields |', '|---|---|');
    const shownRows = rowsWithin(
      review.first.map((r) => `| ${cell(r.file_name)} | ${cell(r.null_fields.join(', '))} |`),
      out,
    );
    if (review.count > shownRows) out.push(`| … and ${review.count - shownRows} more (see --review) | |`);
    out.push('');
  }
  return `${out.join('\n')}\n`;
}

/** A workflow command's message: %, CR and LF escaped (the runner's own rule). */
function data(text: string): string {
  return text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

/** A workflow command's property value (a file's name, an archive member's): inert, and ':' and ',' escaped. */
function property(text: string): string {
  return data(inert(text)).replaceAll(':', '%3A').replaceAll(',', '%2C');
}

/**
 * Pushes `rows` onto `out` while the text stays within SUMMARY_BUDGET; returns how many it pushed.
 * Each row is at most a few KB (cell), so the budget is kept to within one row.
 */
function rowsWithin(rows: string[], out: string[]): number {
  let size = out.reduce((n, line) => n + line.length + 1, 0);
  let pushed = 0;
  for (const row of rows) {
    if (size + row.length > SUMMARY_BUDGET) break;
    out.push(row);
    size += row.length + 1;
    pushed++;
  }
  return pushed;
}

/** Text of others (a file name, the service's words) as an annotation or a summary shows it: inert, capped, never a secret. */
function shown(text: string): string {
  return redact(inert(text, SERVICE_TEXT_MAX));
}

/** A Markdown table cell: pipes would end it; line breaks are escaped by shown. */
function cell(text: string): string {
  return shown(text).replaceAll('|', '\\|');
}
