import { z } from 'zod';

/**
 * A zod error in words, through zod 4's own `z.prettifyError` (one problem a line:
 * `✖ message` then `→ at path`), so every place that reports a schema mismatch (the
 * emulator's 400s and config file, the receiver's 400s, the client's unexpected answers)
 * says it the same way. `max` keeps the first few problems and counts the rest.
 */
export function describeZodError(error: z.ZodError, max = Number.POSITIVE_INFINITY): string {
  const shown = error.issues.slice(0, max);
  const text = z.prettifyError(new z.ZodError(shown));
  const more = error.issues.length - shown.length;
  return more > 0 ? `${text}\n✖ and ${more} more` : text;
}

/** The same on one line, for an HTTP error body or a log line: `message at path; message at path`. */
export function describeZodErrorInline(error: z.ZodError, max = Number.POSITIVE_INFINITY): string {
  return describeZodError(error, max)
    .split('\n✖ ')
    .map((problem) => problem.replace(/^✖ /, '').replace(/\n\s*→ at /, ' at '))
    .join('; ');
}

/**
 * A parse option: a value that is not there at all is "missing", which a log reader grasps at
 * once, instead of zod's "Invalid input: expected string, received undefined".
 */
export const MISSING_IS_MISSING = {
  error: (issue: { code: string; input?: unknown }) =>
    issue.code === 'invalid_type' && issue.input === undefined ? 'missing' : undefined,
} as const;
