import type { TableField } from '../contract/index.ts';
import type { Doc, ScopeLine } from './scope.ts';
import type { Header } from './table-header.ts';
import { CARRY_WORDS, type Segment, cellValue, endsTable, fillsRow, numberColumns, place } from './table-rows.ts';

/**
 * A table that runs over a page break without its header printed again: its rows go on at
 * the top of the next page when they line up under the same columns. Between the last row
 * and the first row of the next page only a page's running text may stand (a footer, a page
 * number, a running head, a letterhead line: text with no value under a number column); a
 * totals line, another table's header, or figures under the columns that make no row mean
 * the table ended at the break. A table read over a break is kept only when its printed sum
 * vouches for it (table-checks.ts).
 */

/** Where the rows after `segment` go on, on the next page, or null when the table ended there. */
export function resumeOnNextPage(field: TableField, header: Header, doc: Doc, segment: Segment): number | null {
  if (segment.end === 'stop' || segment.ambiguous || segment.rows.length === 0) return null;
  let i = segment.at;
  // After a blank gap, the rest of the page must be its running text.
  for (; i < doc.scope.length && doc.scope[i]?.line.page === segment.page; i++) {
    const sl = doc.scope[i];
    if (sl && !runningText(sl, header, doc)) return null;
  }
  const next = segment.page + 1;
  for (; i < doc.scope.length; i++) {
    const sl = doc.scope[i];
    if (!sl || sl.line.page !== next) return null;
    if (sl.cells.length === 0 || sl.cells.some((c) => CARRY_WORDS.test(c.text))) continue;
    if (endsTable(sl, doc)) return null;
    const { cells, unaligned } = place(sl, header, doc.hints);
    if (field.columns.length > 0 && fillsRow(cells, header, doc)) return unaligned ? null : i;
    if (!runningText(sl, header, doc)) return null;
  }
  return null;
}

/** A line a page prints whatever its content: no totals, no line of column titles, no figure under a number column. */
function runningText(sl: ScopeLine, header: Header, doc: Doc): boolean {
  if (sl.cells.length === 0 || sl.cells.some((c) => CARRY_WORDS.test(c.text))) return true;
  if (endsTable(sl, doc)) return false;
  if (sl.cells.length >= 2 && sl.cells.every((c) => !/\d/u.test(c.text))) return false;
  const { cells } = place(sl, header, doc.hints);
  return numberColumns(header).every((f) => cellValue(f, cells.get(f.name)?.text, doc) === null);
}
