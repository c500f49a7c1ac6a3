/**
 * Text written by others (file names, the service's answers, webhook payloads) as a line of ours
 * shows it: inert whatever it holds. A line break would forge a line of its own (and on a CI
 * runner a line starting `::` is a command), an escape sequence would repaint the terminal, and
 * `##[` anywhere in a line is a command to the GitHub runner's older grammar. Each of these is
 * written visibly escaped (`\x0a`, `\u2028`, `##\x5b`), and text past `max` characters is cut and
 * says how much more there was, so one answer cannot fill a log, a job page or the journal.
 */
export function inert(text: string, max = Number.POSITIVE_INFINITY): string {
  const cut = text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
  return cut
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`)
    .replaceAll('##[', '##\\x5b');
}

/**
 * How much of the service's own words a log line, an annotation, the job summary or the journal's
 * reason keeps: enough for any real error message, little enough that a document failing with
 * megabytes of text costs a line.
 */
export const SERVICE_TEXT_MAX = 1024;
