import { dateOrderOf } from './dates.ts';
import type { Layout } from './layout.ts';
import type { DecimalMark, FormatHints } from './values.ts';

/**
 * What a document shows about its own number and date formats. "1,234" alone could be a
 * thousand or one point two; once the same document writes "1.234,50", it is a thousand.
 * A hint is taken only when every unambiguous example in the document agrees.
 */
export function formatHints(layout: Layout): FormatHints {
  const marks = new Set<DecimalMark>();
  const orders = new Set<'dmy' | 'mdy'>();
  for (const page of layout.pages) {
    for (const line of page.lines) {
      for (const cell of line.cells) {
        // A number shows a mark only with a "." or ","; a date's order only with "/" or "-".
        const text = cell.text;
        if (text.includes('.') || text.includes(',')) marksOf(text, marks);
        if (text.includes('/') || text.includes('-')) {
          DATE.lastIndex = 0;
          for (let m = DATE.exec(text); m !== null; m = DATE.exec(text)) {
            const order = dateOrderOf(m[0]);
            if (order) orders.add(order);
          }
        }
      }
    }
  }
  const [mark] = marks.size === 1 ? [...marks] : [];
  const [order] = orders.size === 1 ? [...orders] : [];
  return { decimalMark: mark, dateOrder: order };
}

/**
 * The marks of the numbers written in a text, added to `marks`. A number as written is what
 * /\d[\d.,' \u00a0\u202f]*\d/g finds (its digits grouped or not; it begins and ends with a
 * digit), found here without the pattern's match arrays: a run of those characters from a digit,
 * cut after its last digit. Only a number with a "." or "," can show a mark.
 */
function marksOf(text: string, marks: Set<DecimalMark>): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let lastDigit = -1;
    let marked = false;
    let e = i + 1;
    for (; e < n; e++) {
      const c = text.charCodeAt(e);
      if (isDigit(c)) lastDigit = e;
      else if (c === 0x2e || c === 0x2c) marked = true;
      else if (c !== 0x27 && c !== 0x20 && c !== 0xa0 && c !== 0x202f) break;
    }
    // No digit after the first in the run: no number starts in it (the next digit is past it).
    if (lastDigit < 0) {
      i = e;
      continue;
    }
    if (marked) {
      const mark = decimalMarkOf(text.slice(i, lastDigit + 1));
      if (mark) marks.add(mark);
    }
    i = lastDigit + 1;
  }
}
/** A date written with its day, month and year as numbers. */
const DATE = /\b\d{1,2}[/-]\d{1,2}[/-]\d{4}\b/g;

/** "1,234.50" and "12.5" show "."; "1.234,50" and "12,50" show ","; "1,234" and dates show nothing. */
function decimalMarkOf(number: string): DecimalMark | undefined {
  const dot = number.lastIndexOf('.');
  const comma = number.lastIndexOf(',');
  if (dot >= 0 && comma >= 0) {
    const mark: DecimalMark = dot > comma ? '.' : ',';
    const at = Math.max(dot, comma);
    // The mark once, and before it a whole number grouped by the other sign.
    if (number.indexOf(mark) !== at) return undefined;
    return (mark === '.' ? GROUPED_BY_COMMA : GROUPED_BY_DOT).test(number.slice(0, at)) ? mark : undefined;
  }
  const at = dot >= 0 ? dot : comma;
  if (at < 0 || number.indexOf(number[at] as string) !== at) return undefined;
  // NUMBER's spaces are the only white space a number holds; one or two digits after the mark, and nothing else.
  if (number.includes(' ') || number.includes('\u00a0') || number.includes('\u202f')) return undefined;
  const after = number.length - at - 1;
  if (after < 1 || after > 2 || !isDigit(number.charCodeAt(at + 1)) || !isDigit(number.charCodeAt(number.length - 1)))
    return undefined;
  return number[at] as DecimalMark;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

const GROUPED_BY_COMMA = /^\d{1,3}(,\d{3})+$/;
const GROUPED_BY_DOT = /^\d{1,3}(\.\d{3})+$/;
