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
        if (text.includes('.') || text.includes(','))
          for (const m of text.matchAll(/\d[\d.,' \u00a0\u202f]*\d/g)) {
            const mark = decimalMarkOf(m[0].trim());
            if (mark) marks.add(mark);
          }
        if (text.includes('/') || text.includes('-'))
          for (const m of text.matchAll(/\b\d{1,2}[/-]\d{1,2}[/-]\d{4}\b/g)) {
            const order = dateOrderOf(m[0]);
            if (order) orders.add(order);
          }
      }
    }
  }
  const [mark] = marks.size === 1 ? [...marks] : [];
  const [order] = orders.size === 1 ? [...orders] : [];
  return { decimalMark: mark, dateOrder: order };
}

/** "1,234.50" and "12.5" show "."; "1.234,50" and "12,50" show ","; "1,234" and dates show nothing. */
function decimalMarkOf(number: string): DecimalMark | undefined {
  const dot = number.lastIndexOf('.');
  const comma = number.lastIndexOf(',');
  if (dot >= 0 && comma >= 0) {
    const mark: DecimalMark = dot > comma ? '.' : ',';
    const other = mark === '.' ? ',' : '.';
    const [intPart] = number.split(mark);
    if (intPart === undefined || number.split(mark).length !== 2) return undefined;
    return new RegExp(`^\\d{1,3}(\\${other}\\d{3})+$`).test(intPart) ? mark : undefined;
  }
  const sep = dot >= 0 ? '.' : comma >= 0 ? ',' : undefined;
  if (sep === undefined) return undefined;
  const parts = number.split(sep);
  const tail = parts[1];
  if (parts.length !== 2 || tail === undefined || /\s/.test(number)) return undefined;
  return /^\d{1,2}$/.test(tail) ? sep : undefined;
}
