import { appendFile } from 'node:fs/promises';
import type { Log } from '../client/deps.ts';
import { redact } from '../redact.ts';
import type { BatchSummary } from './summary.ts';

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
  const failed = summary.documents.filter((d) => d.outcome === 'failed' || d.outcome === 'unreadable');
  const lines = failed
    .slice(0, MAX_ANNOTATIONS)
    .map((d) => `::error file=${property(d.file)},title=extract::${data(redact(d.error ?? 'failed'))}`);
  for (const r of summary.needs_review.slice(0, MAX_ANNOTATIONS))
    lines.push(
      `::warning file=${property(r.file_name)},title=extract: needs review::${data(`null fields: ${r.null_fields.join(', ') || '(no results)'}`)}`,
    );
  return lines;
}

export function stepSummary(s: BatchSummary): string {
  const rows = [
    ['completed', s.completed],
    ['skipped (completed earlier)', s.skipped],
    ['failed', s.failed],
    ['still pending', s.pending],
    ['not submitted', s.not_submitted],
    ['with null fields to review', s.needs_review.length],
    ['pages charged', s.pages_charged],
  ];
  const out = ['## extract', '', '| | documents |', '|---|---:|', ...rows.map(([k, v]) => `| ${k} | ${v} |`), ''];
  const failed = s.documents.filter(
    (d) => d.outcome === 'failed' || d.outcome === 'unreadable' || d.outcome === 'left',
  );
  if (failed.length > 0) {
    out.push('### Failed', '', '| file | error |', '|---|---|');
    for (const d of failed.slice(0, MAX_ROWS)) out.push(`| ${cell(d.file)} | ${cell(redact(d.error ?? ''))} |`);
    if (failed.length > MAX_ROWS) out.push(`| … and ${failed.length - MAX_ROWS} more (see --report) | |`);
    out.push('');
  }
  if (s.needs_review.length > 0) {
    out.push('### Needs review', '', '| file | null fields |', '|---|---|');
    for (const r of s.needs_review.slice(0, MAX_ROWS))
      out.push(`| ${cell(r.file_name)} | ${cell(r.null_fields.join(', '))} |`);
    if (s.needs_review.length > MAX_ROWS)
      out.push(`| … and ${s.needs_review.length - MAX_ROWS} more (see --review) | |`);
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
