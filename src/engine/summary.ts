import type { LeafField } from '../contract/index.ts';
import type { Cell, Line } from './layout.ts';
import { overlap } from './layout.ts';
import type { Doc, Scope, ScopeLine } from './scope.ts';
import { placeOf } from './tables.ts';
import type { Place } from './types.ts';
import { looksLikeAmount, parseValue } from './values.ts';
import type { Concept } from './vocabulary/types.ts';

/**
 * A summary table of totals: a header row naming a net amount, a tax amount and a gross
 * amount as its columns ("Nettobetrag │ MwSt-Betrag │ Endbetrag", "Net │ VAT │ Total"), one
 * row per tax rate under it and, when there are several, a last row that sums them. Column
 * titles are no labels for the cell below them; this table is read only when its own
 * arithmetic vouches for every row (net + tax = gross on each, and the last row is the sum
 * of the rows above it), so the last row's amounts are the invoice's subtotal, tax and total.
 */

const ROLES = ['subtotal', 'tax', 'total'] as const;
type Role = (typeof ROLES)[number];

type SummaryRow = Record<Role, { cell: Cell; line: Line; value: number }>;
/** The last row and the column titles it stands under. */
export type Summary = { row: SummaryRow; titles: Record<Role, Cell> };

/** How far below the rows, in text heights, their sum row may stand. */
const SUM_ROW_GAP_EM = 4;

const close = (a: number, b: number) => Math.abs(a - b) < 0.005;

/** The role a header cell's title names, when it names exactly one and nothing else. */
function roleOf(text: string, doc: Doc): Role | undefined {
  const m = doc.labels.match(text);
  if (m?.kind !== 'clean' || m.rest !== '' || m.extra !== undefined) return undefined;
  const roles = ROLES.filter((r) => m.concepts.has(r));
  return roles.length === 1 ? roles[0] : undefined;
}

/** The one cell of a line under a column title, sitting under it more than under any other title. */
function under(line: Cell[], title: Cell, titles: readonly Cell[]): Cell | undefined {
  const below = line.filter((c) => overlap(c, title) > 0);
  const [cell] = below;
  if (below.length !== 1 || !cell) return undefined;
  const mine = overlap(cell, title);
  return titles.some((t) => t !== title && overlap(cell, t) >= mine) ? undefined : cell;
}

/**
 * The summary the header line at `at` heads, or undefined when the table does not vouch for
 * one. A role titled twice ("Warenwert" and "Nettobetrag", both net) takes the one column
 * the arithmetic holds for; two that both hold: undefined.
 */
export function summaryBelow(scope: Scope, at: number, doc: Doc): Summary | undefined {
  const header = scope[at];
  if (!header) return undefined;
  const columns: Record<Role, Cell[]> = { subtotal: [], tax: [], total: [] };
  for (const cell of header.cells) {
    const role = roleOf(cell.text, doc);
    if (role) columns[role].push(cell);
  }
  let found: Summary | undefined;
  for (const subtotal of columns.subtotal)
    for (const tax of columns.tax)
      for (const total of columns.total) {
        const summary = vouched(scope, at, { subtotal, tax, total }, doc);
        if (summary && found) return undefined;
        found = summary ?? found;
      }
  return found;
}

function vouched(scope: Scope, at: number, titles: Record<Role, Cell>, doc: Doc): Summary | undefined {
  const header = scope[at];
  if (!header) return undefined;
  const rows: SummaryRow[] = [];
  let previous = header.line;
  for (let k = at + 1; k < scope.length; k++) {
    const sl = scope[k];
    if (!sl || sl.cells.length === 0) continue;
    // Rows sit close together; a sum row may stand a few blank lines apart (its arithmetic vouches for it).
    const gap = sl.line.y - previous.y;
    if (sl.line.page !== previous.page || gap > SUM_ROW_GAP_EM * Math.max(sl.line.height, previous.height)) break;
    const row: Partial<SummaryRow> = {};
    for (const role of ROLES) {
      const cell = under(sl.cells, titles[role], header.cells);
      const value = cell && looksLikeAmount(cell.text) ? parseValue('decimal', cell.text, doc.hints) : null;
      if (!cell || typeof value !== 'number') break;
      row[role] = { cell, line: sl.line, value };
    }
    const { subtotal, tax, total } = row;
    if (!subtotal || !tax || !total) break;
    if (!close(subtotal.value + tax.value, total.value)) return undefined;
    rows.push({ subtotal, tax, total });
    previous = sl.line;
  }
  // A lone row could be a line item's: only a sum row under the rates vouches for the table.
  const last = rows.at(-1);
  const above = rows.slice(0, -1);
  if (!last || above.length === 0) return undefined;
  for (const role of ROLES) {
    const sum = above.reduce((s, r) => s + r[role].value, 0);
    if (!close(sum, last[role].value)) return undefined;
  }
  return { row: last, titles };
}

/**
 * The tax of a rate row ("Umsatzsteuer (S) │ 113,03 │ 7 │ 7,91", "VAT │ 100.00 │ 20 │ 20.00"):
 * three numbers, a base, a rate in percent and an amount, where base × rate / 100 is the
 * amount to the cent. The checksum says which number is the tax; a zero rate checks nothing.
 * It is the tax of one rate: callers rank it below every label of the invoice's tax.
 */
/** What a tax label's cell may end with when its rate is printed in it ("MwSt. 19%", "VAT 20 %"). */
export const RATE_REST = /^(\d{1,2}(?:[.,]\d{1,2})?)\s*%$/u;

export function taxOfRateRow<C extends { text: string; value: number }>(row: readonly C[]): C | undefined {
  if (row.length !== 3) return undefined;
  const [base, rate, amount] = row;
  if (!base || !rate || !amount || !looksLikeAmount(base.text) || !looksLikeAmount(amount.text)) return undefined;
  if (!(rate.value > 0 && rate.value <= 100) || Math.abs(amount.value) >= Math.abs(base.value)) return undefined;
  // Rounded to the cent: within half a cent (and a float's error).
  return Math.abs((base.value * rate.value) / 100 - amount.value) <= 0.005 + 1e-9 ? amount : undefined;
}

/** The role of a summary's column a field answers: its concept's, or the column whose title is its own label. */
export function roleFor(concept: Concept | undefined, path: string, summary: Summary, doc: Doc): Role | undefined {
  if (concept !== undefined) return ROLES.find((r) => r === concept);
  const own = ROLES.filter((r) => doc.labels.match(summary.titles[r].text)?.owners.has(path));
  return own.length === 1 ? own[0] : undefined;
}

/** The amount a cell ends with ("Due payable: 571.04 €", "571,04"), written as an amount. */
const TRAILING_AMOUNT = /(-?\d[\d.,' \u00a0]*\d)\s*(?:€|EUR|\$|USD|£|GBP|CHF)?\s*$/u;

/** Where the document prints an amount equal to `sum`; several places that print it are one answer. */
export function printedSum(sum: number, doc: Doc): { value: number; at: Place } | undefined {
  for (const sl of doc.scope) {
    for (const cell of sl.cells) {
      const token = TRAILING_AMOUNT.exec(cell.text)?.[1];
      if (token === undefined || !looksLikeAmount(token)) continue;
      const value = parseValue('decimal', token, doc.hints);
      if (typeof value === 'number' && close(value, sum)) return { value, at: placeOf(sl.line, cell) };
    }
  }
  return undefined;
}

/** The cells right of a label on its line that read as numbers, in order. */
export function numbersAfter(sl: ScopeLine, j: number, field: LeafField, doc: Doc): Array<Cell & { value: number }> {
  const out: Array<Cell & { value: number }> = [];
  for (const c of sl.cells.slice(j + 1)) {
    const v = parseValue(field.type, c.text, doc.hints);
    if (typeof v === 'number') out.push({ ...c, value: v });
  }
  return out;
}

/**
 * The total of a totals row: the only amount written as one (others are counts), or the
 * last number when it is the sum or the product of the others. Otherwise none.
 */
export function totalOfRow(row: Array<Cell & { value: number }>): (Cell & { value: number }) | undefined {
  const amounts = row.filter((c) => looksLikeAmount(c.text));
  if (amounts.length === 1) return amounts[0];
  const last = row.at(-1);
  if (!last) return undefined;
  const others = row.slice(0, -1).map((c) => c.value);
  const sum = others.reduce((a, b) => a + b, 0);
  const product = others.reduce((a, b) => a * b, 1);
  if (Math.abs(sum - last.value) < 0.005 || (others.length === 2 && Math.abs(product - last.value) < 0.005))
    return last;
  return undefined;
}
