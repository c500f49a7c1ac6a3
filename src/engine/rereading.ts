import type { FieldDefinition, Results } from '../contract/index.ts';
import { type Role, receiptRoles } from './receipts.ts';
import type { Grounding } from './types.ts';

/**
 * An image read twice when the first reading lacks the total a receipt's rules look for (extract.ts
 * groundImage). OCR's default layout finds blocks and columns: on a till's receipt it often
 * drops the column of amounts set far right of its labels, or splits a line, and a word it reads
 * with doubt nulls the value. A second reading as one block of lines (ocr.ts) reads the same page
 * another way; each field it reads with no doubt fills one the first left null. A field the first
 * read is never replaced, so the second reading changes nothing the first found.
 */

/**
 * The roles whose lack is worth a second reading: the total, whose column OCR drops. A name or a
 * date the first reading lacks is mostly one it read with doubt, which the second reads the same
 * way: reading again for those alone would double the time for little.
 */
const REREAD: ReadonlySet<Role> = new Set(['total']);

type Grounded = { results: Results; grounding: Grounding };

/** Whether the first reading left null a field a second reading may find. */
export function lacksReceiptValues(fields: FieldDefinition, results: Results): boolean {
  return [...receiptRoles(fields)].some(([name, role]) => REREAD.has(role) && results[name] === null);
}

/**
 * Fills `first`'s null receipt fields with what `second` read. `doubted`: the first reading's
 * values before its doubt nulled them. A date has no check of its own (a total has the cash and
 * the change), and a digit OCR doubted once it reads the same way again: a date the first
 * reading doubted is not taken from the second.
 */
export function fillFromSecondReading(
  fields: FieldDefinition,
  first: Grounded,
  second: Grounded,
  doubted: Results,
): void {
  for (const [name, role] of receiptRoles(fields)) {
    const value = second.results[name];
    if (first.results[name] !== null || value === null || value === undefined) continue;
    if (role === 'date' && doubted[name] !== null && doubted[name] !== undefined) continue;
    first.results[name] = value;
    const at = second.grounding[name];
    if (at) first.grounding[name] = at;
  }
}
