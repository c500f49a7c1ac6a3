import { LANGUAGES } from './languages.ts';
import type { LanguageWords } from './types.ts';

/**
 * The words of every language by role, joined for the rules that read them: a set of words,
 * or the alternatives of every language's patterns, which a rule sets in its own frame (what
 * may stand before and after the words).
 */

type WordRole = {
  [K in keyof LanguageWords]-?: NonNullable<LanguageWords[K]> extends readonly string[] ? K : never;
}[keyof LanguageWords];

/** Every language's words of a role, in the languages' order. */
export function wordsOf(role: WordRole): string[] {
  return LANGUAGES.flatMap((l) => l.words[role] ?? []);
}

function setOf(role: WordRole): ReadonlySet<string> {
  return new Set(wordsOf(role));
}

/** The alternatives of every language's patterns of a role, as one group for a rule's pattern: `(?:a|b|c)`. */
export function anyOf(role: WordRole): string {
  return `(?:${wordsOf(role).join('|')})`;
}

/** Number words: one stands for all ("Invoice No." is "Invoice Number"). */
export const NUMBER_WORDS = setOf('numberWords');
/** Field names whose last word says "identifier". */
export const ID_WORDS = setOf('idWords');
/** Words that point a heading at another document ("Rechnung zur Bestellung Nr."): its number is not the invoice's. */
export const POINTING = setOf('pointing');
/** Words after a total's label that make it another amount ("Total net", "Gesamtbetrag der Zuschläge"). */
export const NOT_TOTAL = setOf('notTotal');
/** Words after a total's label that say the tax is in it; with a net word, it is another amount still. */
export const INCLUSIVE = setOf('inclusive');
export const NET_NOT_INCLUSIVE = setOf('netNotInclusive');
/** Words that open an addressee's name rather than being it ("Herrn", "Mrs."). */
export const SALUTATIONS = setOf('salutations');
/** Yes and no as words (a box's marks are values.ts's). */
export const YES_WORDS = setOf('yes');
export const NO_WORDS = setOf('no');
/** Number words written after a name, and those that compare equal, lower case, as a key's number words ("Kunden-Nr."). */
export const NUMBER_KEY_WORDS: readonly string[] = [
  ...new Set([...wordsOf('numberWords'), ...wordsOf('numberAfter').map((w) => w.toLowerCase())]),
].filter((w) => !w.includes('.'));
