import type { LeafField, Results, TableField } from '../contract/index.ts';
import type { Cell } from './layout.ts';
import { columnConceptOf } from './label-forms.ts';
import { type Doc, lineKey } from './scope.ts';
import { type CheckedRow, checkTable, productIs } from './table-checks.ts';
import { type Header, findHeaders } from './table-header.ts';
import { resumeOnNextPage } from './table-pages.ts';
import { type Row, type Segment, cellValue, isLineAmount, readRows } from './table-rows.ts';
import type { FieldPath, Place } from './types.ts';

export { placeOf } from './table-rows.ts';

/**
 * Table fields. The header (table-header.ts) names the columns; rows are read below it,
 * each cell given to the column it stands under. A row may take several lines: a
 * description that wraps, an amount printed on the row's second line; a line that follows
 * a row closely and only adds text, or fills the row's empty columns, belongs to it. The
 * table ends at its totals (a "Total"/"Summe" line, any other field's label, or an amount
 * that is the sum of the rows above), at text after a blank gap that is no row, or at the
 * page's end; it continues on the next page when the header is repeated there, and a
 * carried-forward line at the break is no item.
 *
 * Precision first: a row must have a description when the table has a description
 * column, and a value in a number column. When a number stands under no column title
 * (the columns cannot be told), when rows follow the table's end before any totals, or
 * when two separate tables have the same header, the field is null. A line under a row
 * that changes its amount (a discount) makes that row's amount null.
 */

/**
 * `totals`: on the line that ended a table read, the cell under its amount column, by the
 * line's key ("Total │ 5.00 │ │ 65.00": 65.00, the quantities' sum left aside).
 */
export type TableRead = {
  rows: Results[] | null;
  places: Array<Record<string, Place>>;
  lines: Set<string>;
  totals: Map<string, Cell>;
};

export function readTable(field: TableField, path: FieldPath, doc: Doc): TableRead {
  const headers = findHeaders(field, path, doc);
  const segments: Segment[][] = [];
  let overBreak = false;
  for (const [i, header] of headers.entries()) {
    const segment = readRows(field, header, doc);
    const previous = segments.at(-1);
    const prevLast = previous?.at(-1);
    const headerLine = doc.scope[header.at]?.line;
    const continues =
      prevLast !== undefined &&
      prevLast.end !== 'stop' &&
      headerLine !== undefined &&
      sameColumns(headers[i - 1], header) &&
      prevLast.page === headerLine.page - 1;
    const group = continues && previous ? previous : [];
    if (group !== previous) segments.push(group);
    group.push(segment);
    for (let last = segment, at = resumeOnNextPage(field, header, doc, last); at !== null; ) {
      last = readRows(field, header, doc, at);
      group.push(last);
      overBreak = true;
      at = resumeOnNextPage(field, header, doc, last);
    }
  }
  const lines = new Set<string>();
  for (const h of headers) {
    for (let i = h.at; i <= h.last; i++) {
      const line = doc.scope[i]?.line;
      if (line) lines.add(lineKey(line));
    }
  }
  for (const s of segments.flat()) for (const k of s.lines) lines.add(k);
  const totals = new Map<string, Cell>();
  const [only] = segments;
  const none = { rows: null, places: [], lines, totals };
  if (segments.length !== 1 || !only || only.some((s) => s.ambiguous)) return none;
  const read = only.flatMap((s) => s.rows);
  if (read.length === 0) return none;
  const total = only.at(-1)?.total;
  if (total) totals.set(total.line, total.cell);
  const lastLine = read.at(-1)?.last;
  const below = doc.scope.findIndex((sl) => sl.line === lastLine) + 1;
  const twofold = new Set(only.flatMap((s) => [...s.twofold]));
  const as = read.map((row) => ({
    values: rowValues(field, row, doc, twofold),
    rates: row.rates,
    amounts: row.amounts,
  }));
  dropUnseparated(field.columns, read, as);
  const rows = checkTable(field.columns, as, doc, below, overBreak);
  if (rows === null) return none;
  const places = read.map((row, i) => {
    const out: Record<string, Place> = {};
    for (const [name, cell] of row.cells)
      if (rows[i]?.[name] !== null && rows[i]?.[name] !== undefined) out[name] = cell.place;
    return out;
  });
  return { rows, places, lines, totals };
}

function sameColumns(a: Header | undefined, b: Header): boolean {
  return a !== undefined && [...a.matched].sort().join() === [...b.matched].sort().join();
}

function rowValues(field: TableField, row: Row, doc: Doc, twofold: ReadonlySet<string>): Results {
  const out: Results = {};
  for (const c of field.columns) {
    const changed = (row.amountChanged && isLineAmount(c)) || twofold.has(c.name);
    out[c.name] = changed ? null : cellValue(c, row.cells.get(c.name)?.text, doc);
  }
  return out;
}

/** Digits with a decimal mark and two decimals: "3.20", "1.980,00". */
const CENTS = /\d[.,]\d{2}(?!\d)/u;

/**
 * In a money column (unit price, amount) whose other cells print cents, a cell printed
 * with no decimal mark at all ("455€" among "3.20€" and "19.80 €") lost its mark to OCR
 * or to the print: its value is null, unless its row's quantity × unit price makes the
 * row's amount ("30 Meter │ 10 │ 300" among "1.000,00": printed so).
 */
function dropUnseparated(columns: readonly LeafField[], read: readonly Row[], as: readonly CheckedRow[]): void {
  const of = (concept: string) => columns.find((c) => columnConceptOf(c) === concept)?.name;
  const [quantity, price, amount] = [of('quantity'), of('unit_price'), of('line_amount')];
  const vouched = (row: CheckedRow): boolean => {
    const q = quantity === undefined ? null : row.values[quantity];
    const p = price === undefined ? null : row.values[price];
    const a = amount === undefined ? null : row.values[amount];
    if (typeof q !== 'number' || typeof p !== 'number') return false;
    const amounts = typeof a === 'number' ? [a] : (row.amounts ?? []);
    return amounts.some((x) => productIs(q, p, x, row.rates));
  };
  const keep = as.map(vouched);
  for (const c of columns) {
    const concept = columnConceptOf(c);
    if (concept !== 'unit_price' && concept !== 'line_amount') continue;
    const texts = read.map((row) => row.cells.get(c.name)?.text);
    if (!texts.some((t) => t !== undefined && CENTS.test(t))) continue;
    for (const [i, t] of texts.entries()) {
      const values = as[i]?.values;
      if (t === undefined || !values || keep[i] || !/\d/u.test(t) || /\d[.,]\d/u.test(t)) continue;
      values[c.name] = null;
    }
  }
}
