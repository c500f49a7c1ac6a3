import { appendFile } from 'node:fs/promises';
import type { Log } from '../client/deps.ts';
import { redact } from '../redact.ts';
import type { ReviewEntry } from '../outputs/review.ts';
import { documentEntries, reviewEntries, type BatchSummary, type ReportEntry } from './summary.ts';

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

export async function reportToGithub(
  summary: BatchSummary,
  env: Record<string, string | undefined>,
  stderr: { write(text: string): unknown },
  log: Log,
): Promise<void> {
  if (env.GITHUB_ACTIONS !== 'true' || summary.dry_run) return;
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
    (d) => `::error file=${property(d.file)},title=extract::${data(redact(d.error ?? 'failed'))}`,
  );
  for (const r of firstOf(reviewEntries(summary), () => true, MAX_ANNOTATIONS).first)
    lines.push(
      `::warning file=${property(r.file_name)},title=extract: needs review::${data(`null fields: ${r.null_fields.join(', ') || '(no results)'}`)}`,
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
    for (const d of failed.first) out.push(`| ${cell(d.file)} | ${cell(redact(d.error ?? ''))} |`);
    if (failed.count > MAX_ROWS) out.push(`| … and ${failed.count - MAX_ROWS} more (see --report) | |`);
    out.push('');
  }
  if (review.count > 0) {
    out.push('### Needs review', '', '| file | null fields |', '|---|---|');
    for (const r of review.first) out.push(`| ${cell(r.file_name)} | ${cell(r.null_fields.join(', '))} |`);
    if (review.count > MAX_ROWS) out.push(`| … and ${review.count - MAX_ROWS} more (see --review) | |`);
    out.push('');
  }
  return `${out.join('\n')}\n`;
}

/** A workflow command's message: %, CR and LF escaped (the runner's own rule). */
function data(text: string): string {
  return text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

/** A workflow command's property value: also ':' and ','. */
function property(text: string): string {
  return data(text).replaceAll(':', '%3A').replaceAll(',', '%2C');
}

/** A Markdown table cell: pipes and line breaks would end it. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replace(/[\r\n]+/g, ' ');
}
