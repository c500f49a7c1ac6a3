import type { LogLevel } from '../client/deps.ts';
import type { ReportEntry } from '../batch/summary.ts';

/**
 * The one log line of a document (journald, docker logs): its file, where it ended, and what
 * happens next. A document an earlier run settled is a debug line, unless its record was just
 * written to the output.
 */
export function describeEntry(entry: ReportEntry, written: boolean): { level: LogLevel; text: string } {
  const id = entry.document_id ?? 'no document id';
  const pages = entry.page_count === null ? '' : `, ${entry.page_count} page${entry.page_count === 1 ? '' : 's'}`;
  switch (entry.outcome) {
    case 'completed':
      return { level: 'info', text: `${entry.file}: completed (${id}${pages})` };
    case 'failed':
    case 'unreadable':
      return { level: 'error', text: `${entry.file}: failed: ${entry.error ?? 'no reason given'}` };
    case 'skipped':
      return written
        ? { level: 'info', text: `${entry.file}: completed earlier (${id}); its record is written from the journal` }
        : { level: 'debug', text: `${entry.file}: completed earlier (${id}): nothing sent` };
    case 'left':
      if (entry.set_aside === true)
        return {
          level: written ? 'warn' : 'debug',
          text: `${entry.file}: set aside by an earlier run (it fails the same way again: ${entry.error ?? 'no reason given'}); --retry-failed sends it again`,
        };
      return {
        level: written ? 'warn' : 'debug',
        text: `${entry.file}: failed earlier: ${entry.error ?? 'no reason given'}; --retry-failed sends it again`,
      };
    case 'other_worker':
      return { level: 'info', text: `${entry.file}: completed by another run sharing the journal (${id})` };
    case 'pending':
      return { level: 'warn', text: `${entry.file}: still processing (${id}): collected at the next rescan` };
    case 'not_submitted':
      return { level: 'warn', text: `${entry.file}: not sent: ${entry.error ?? 'the run stopped first'}` };
    case 'planned':
      return { level: 'debug', text: `${entry.file}: planned` };
  }
}
