import { isMoneyMark } from './values.ts';
import { LANGUAGES } from './vocabulary/languages.ts';
import type { Concept } from './vocabulary/types.ts';

/**
 * A cell's text as the words of its label compose (vocabulary/roles.ts): a qualifier in
 * parentheses unwrapped, a currency mark between the label's words left out, and what may
 * follow an amount's label to name its currency.
 */

/** The words of every language's net and gross qualifiers, lower case and without accents or dots. */
const QUALIFIER_WORDS: ReadonlySet<string> = new Set(
  LANGUAGES.flatMap(({ words: { compose: w } }) => [...w.net, ...w.gross].flatMap((q) => plainWords(q))),
);

function plainWords(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/**
 * A label's qualifier written in parentheses ("Total amount (net):", "Betrag (brutto)")
 * unwrapped, so that the label composes with it; other parentheses ("Tax (19%)", "(380)")
 * are left as they are.
 */
function unbracketQualifiers(text: string): string {
  return text.replace(/\(([^()]*)\)/g, (whole, inner: string, at: number) => {
    const words = plainWords(inner);
    // Most parentheses hold no qualifier ("(380)", "(19%)"): the words before them are not read.
    if (words.length === 0 || !words.every((w) => QUALIFIER_WORDS.has(w))) return whole;
    // "Rechnungssumme Netto (excl. USt.)": a label qualified already, and its parentheses a gloss.
    return plainWords(text.slice(0, at)).some((w) => QUALIFIER_WORDS.has(w)) ? whole : ` ${inner} `;
  });
}

/** A currency mark between a label's words ("Total € Incl. VAT", "Betrag EUR netto"). */
const INNER_MARK = /(?<=\p{L}\.?)\s+(?:€|\$|£|[A-Z]{3})\s+(?=\p{L})/gu;
/**
 * A cell's text as its label's words compose: a qualifier in parentheses unwrapped
 * (unbracketQualifiers), a currency mark between the words left out. `conceptsOf`: the
 * concepts of the label a text opens with; a mark is left out only when a label is left.
 */
export function labelText(text: string, conceptsOf: (t: string) => ReadonlySet<Concept> | undefined): string {
  let out = text.includes('(') ? unbracketQualifiers(text) : text;
  if (/\s(?:€|\$|£|[A-Z]{3})\s/.test(out)) {
    const marks = out.replace(INNER_MARK, (whole) => (isMoneyMark(whole) ? ' ' : whole));
    if (marks !== out && conceptsOf(marks) !== undefined) out = marks;
  }
  return out;
}

/**
 * What may follow an amount's label to say which currency the amount is in: a code or a
 * symbol ("Total EUR", "Betrag €"), "in EUR" / "en EUR", or a lone "in" whose currency
 * stands in the next cell ("Steuerbetrag in │ EUR │ 56,87").
 */
export function namesCurrencyOfAmount(text: string): boolean {
  if (isMoneyMark(text)) return true;
  const m = /^(?:in|en|em)(?:\s+(.+))?$/iu.exec(text);
  return m !== null && (m[1] === undefined || isMoneyMark(m[1]));
}
