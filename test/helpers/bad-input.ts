import fc from 'fast-check';

/** Every spelling of "go up a directory" we know of, for ids, storage paths, file names and URLs. */
export const TRAVERSALS = [
  '..',
  '../',
  '..\\',
  '%2e%2e',
  '%2e%2e%2f',
  '..%2f',
  '%252e%252e',
  '....//',
  '..;/',
  '%c0%ae%c0%ae',
  '/etc/passwd',
  'C:\\Windows',
  '\u0000',
  '..\u2215',
  '.',
  '',
];

/**
 * Text a stranger might send where a name goes: random, graphemes, traversals, control
 * characters, and (with `huge`) a 5,000-character string.
 */
export function oddText(segment: string, options: { huge?: boolean } = {}) {
  const huge = options.huge ? [fc.constant('A'.repeat(5000))] : [];
  return fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constantFrom(...TRAVERSALS),
    fc.array(fc.constantFrom(...TRAVERSALS, 'a', '/', segment), { maxLength: 6 }).map((a) => a.join('')),
    fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 8 }),
    ...huge,
  );
}
