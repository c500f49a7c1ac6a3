import { type DateOrder, parseDate } from './dates.ts';
import { anyOf } from './vocabulary/role-words.ts';

/**
 * Payment terms written as a sentence: "Bitte überweisen Sie bis zum 30.05.2017.",
 * "Please remit until 2019-07-01.", "Zahlbar innerhalb 30 Tagen netto bis 04.04.2013, 3%
 * Skonto innerhalb 10 Tagen bis 15.03.2013", "payable by 1 March 2024", "à régler avant le
 * 13/12/2017". The due date is the one a clause about paying sets as its deadline; a clause
 * about a discount ("Skonto", "escompte") or about a payment already made ("bezahlt",
 * "received") sets none. Only a printed date counts: a term in days is never turned into one.
 */

/** Words of a clause about paying the invoice. */
const PAYING = new RegExp(`(?<!\\p{L})${anyOf('payingPatterns')}(?!\\p{L})`, 'iu');
/** A clause about an early-payment discount: its date is no due date. */
const DISCOUNT = new RegExp(`(?<!\\p{L})${anyOf('discountPatterns')}(?!\\p{L})`, 'iu');
/** A clause about a payment made: its date is no due date either. */
const PAID = new RegExp(`(?<!\\p{L})${anyOf('paidPatterns')}(?!\\p{L})`, 'iu');
/** What stands right before a deadline's date. */
const DEADLINE = new RegExp(
  `(?<!\\p{L})(?:${anyOf('deadlinePatterns')}|${anyOf('duePatterns')}\\s+${anyOf('dueOnPatterns')})\\s+`,
  'giu',
);

/** Whether a text speaks of an early-payment discount ("mit 2% Skonto bis"): its date is the discount's deadline. */
export function isDiscount(text: string): boolean {
  return DISCOUNT.test(text);
}

/** Every due date the clauses of a cell's text set. */
export function dueDatesIn(text: string, order?: DateOrder): string[] {
  if (!PAYING.test(text)) return [];
  const out: string[] = [];
  for (const clause of text.split(/[,;]\s+(?!\d{4}(?!\d))|\.\s+(?=\p{Lu})/u)) {
    if (!PAYING.test(clause) || DISCOUNT.test(clause) || PAID.test(clause)) continue;
    for (const m of clause.matchAll(DEADLINE)) {
      const date = dateAt(clause.slice(m.index + m[0].length), order);
      if (date !== null) out.push(date);
    }
  }
  return out;
}

/** The date a text opens with ("30.05.2017.", "1 March 2024 to …"): its longest leading words that parse. */
function dateAt(text: string, order?: DateOrder): string | null {
  const words = text.split(/\s+/).slice(0, 4);
  for (let n = words.length; n > 0; n--) {
    const date = parseDate(
      words
        .slice(0, n)
        .join(' ')
        .replace(/[.,:;!)]+$/, ''),
      order,
    );
    if (date !== null) return date;
  }
  return null;
}
