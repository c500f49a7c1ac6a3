import { type DateOrder, parseDate } from './dates.ts';
import type { Layout } from './layout.ts';
import { placeOfPart } from './receipt-places.ts';
import type { Place } from './types.ts';
import type { FormatHints } from './values.ts';

/**
 * The dates of a receipt: the one it prints when it prints no other, the order of day and month
 * its money or its issuer's company form says.
 */

/** Dates as a receipt prints them, with a two-digit year too (counted, never read). */
const DATE_TOKEN =
  /(?<![\d/.-])(?:\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})|\d{4}-\d{2}-\d{2}|\d{1,2}[\s-][A-Za-z]{3,9}\.?[\s-]\d{4})(?![\d/.-])/g;

/**
 * Money marks of the countries that write the day before the month: where the document shows
 * no date that says its order, its currency does ("RM 9.90" on a receipt from Malaysia).
 */
const DAY_FIRST_MONEY = /\b(?:RM|MYR|RINGGIT|SGD|S\$|EUR|GBP|INR|Rs)\b|[€£]/;
/**
 * Company forms of the same countries: a receipt that prints no currency mark ("TOTAL 9.90") still
 * names its issuer's form ("… SDN BHD", "… PTE LTD").
 */
const DAY_FIRST_FORM = /\b(?:sdn\.?\s*bhd|berhad|pte\.?\s*ltd)\b/i;
/** A date with a two-digit year: read as this century's once the order is known. */
const SHORT_YEAR = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{2})$/;

function readDate(text: string, order: DateOrder | undefined): string | null {
  const short = order ? SHORT_YEAR.exec(text) : null;
  return parseDate(short ? `${short[1]}/${short[3]}/20${short[4]}` : text, order);
}

/** The date when the document prints exactly one (once or more), and reads it; else nothing. */
export function loneDate(layout: Layout, order: DateOrder | undefined): { iso: string; at: Place } | undefined {
  const found = new Map<string, Place>();
  for (const page of layout.pages) {
    for (const line of page.lines) {
      for (const cell of line.cells) {
        for (const m of cell.text.matchAll(DATE_TOKEN)) {
          const read = readDate(m[0], order);
          // "52 SHOP 2108" has the shape of "12 Mar 2018" and no month: not a date at all.
          if (read === null && /\p{L}/u.test(m[0])) continue;
          const iso = read ?? `unread ${m[0]}`;
          if (!found.has(iso)) found.set(iso, placeOfPart(line, cell, m.index, m.index + m[0].length));
        }
      }
    }
  }
  if (found.size !== 1) return undefined;
  const [[iso, at]] = [...found] as [[string, Place]];
  return iso.startsWith('unread') ? undefined : { iso, at };
}

/** The order of day and month: the dates' own, else the money's or the company form's; contradicted when they disagree. */
export function dateOrder(layout: Layout, hints: FormatHints): DateOrder | 'contradicted' | undefined {
  const dayFirst = dayFirstMoney(layout);
  if (hints.dateOrder === 'mdy' && dayFirst) return 'contradicted';
  return hints.dateOrder ?? (dayFirst ? 'dmy' : undefined);
}

function dayFirstMoney(layout: Layout): boolean {
  const says = (text: string) => DAY_FIRST_MONEY.test(text) || DAY_FIRST_FORM.test(text);
  return layout.pages.some((p) => p.lines.some((l) => says(l.cells.map((c) => c.text).join(' '))));
}
