import type { LeafField, Results } from '../contract/index.ts';
import { columnConceptOf } from './label-forms.ts';
import type { Doc } from './scope.ts';
import { looksLikeAmount, parseValue } from './values.ts';
import type { ColumnConcept } from './vocabulary/columns.ts';
import type { Concept } from './vocabulary/types.ts';

/**
 * The arithmetic a table read must pass before its rows are returned (tables.ts). A table
 * whose columns were told wrong, or whose rows were cut or joined wrong, rarely adds up:
 * - the rows' amounts sum to an amount printed below the table (the net subtotal, the goods
 *   value, the total): when amounts are printed there and none is the sum, a row is
 *   missing, extra or misread, and the table is null;
 * - a row that prints its quantity, unit price and amount has quantity × unit price =
 *   amount, within the rounding of the printed price, less a discount printed on the row
 *   ("Rem. 10%"); a credit note may sign only the amount. A row that fails keeps its
 *   amount when the sum confirmed it, and loses the figures the check cannot vouch for;
 * - no row is a deduction billed as a row (a negative amount alone among priced items).
 * A check that cannot be made (no amount column, a row without its amount) is no failure.
 */

/**
 * A row as read: its values, and the percentages and amounts printed in columns that name
 * no field (`amounts` optional: a table read that has none to give).
 */
export type CheckedRow = { values: Results; rates: readonly number[]; amounts?: readonly number[] };

/** The rows with what their arithmetic cannot vouch for set to null, or null when the table fails. */
export function checkTable(
  columns: readonly LeafField[],
  rows: readonly CheckedRow[],
  doc: Doc,
  below: number,
  mustSum = false,
): Results[] | null {
  const of = (concept: ColumnConcept) => columns.find((c) => columnConceptOf(c) === concept)?.name;
  const quantity = of('quantity');
  const price = of('unit_price');
  const amount = of('line_amount');
  const out = rows.map((r) => ({ ...r.values }));
  // Rows that print no amount of a field are checked against amounts in columns that name none.
  const unnamed = rows.map((r) => (amount === undefined || typeof r.values[amount] !== 'number' ? r : null));
  checkUnnamedAmounts(unnamed, out, quantity, price);
  if (amount === undefined) return out;
  const amounts = rows.flatMap((r) => {
    const a = r.values[amount];
    return typeof a === 'number' ? [a] : [];
  });
  if (deductionAmong(rows, amount, [quantity, price])) return null;
  const sum = amounts.reduce((s, a) => s + a, 0);
  const printed = amounts.length === rows.length ? printedBelow(sum, doc, below) : 'none';
  if (printed === 'other' || (mustSum && printed !== 'sum')) return null;
  for (const [i, row] of rows.entries()) {
    const a = row.values[amount];
    const q = quantity === undefined ? null : row.values[quantity];
    const p = price === undefined ? null : row.values[price];
    if (typeof a !== 'number' || typeof q !== 'number' || typeof p !== 'number') continue;
    if (productIs(q, p, a, row.rates)) continue;
    const values = out[i];
    if (!values || quantity === undefined || price === undefined) continue;
    values[quantity] = null;
    values[price] = null;
    if (printed !== 'sum') values[amount] = null;
  }
  return out;
}

/**
 * A negative amount alone on its row (no quantity, no unit price) among items that print
 * theirs: a discount or a deduction ("Discount 10%", "abzgl. Abschlagsrechnung"), which the
 * invoice may bill as an allowance, not an item. Whether it is one of the items is a guess.
 */
function deductionAmong(
  rows: readonly CheckedRow[],
  amount: string,
  others: ReadonlyArray<string | undefined>,
): boolean {
  const names = others.filter((n) => n !== undefined);
  const alone = (r: CheckedRow) => names.every((n) => r.values[n] === null || r.values[n] === undefined);
  if (names.length === 0 || rows.every(alone)) return false;
  return rows.some((r) => {
    const a = r.values[amount];
    return alone(r) && typeof a === 'number' && a < 0;
  });
}

/** A price printed to the cent may have been rounded from a finer one: half a cent per unit. */
export function productIs(quantity: number, price: number, amount: number, rates: readonly number[]): boolean {
  const tolerance = Math.abs(quantity) * 0.005 + 0.011;
  const gross = Math.abs(quantity * price);
  return [0, ...rates].some((r) => Math.abs(gross * (1 - r / 100) - Math.abs(amount)) <= tolerance);
}

/** Numbers as a cell may hold them among words: "Summe netto: 1.420,00 €". */
const NUMBER = /-?\d[\d.,'\s]*\d|\d/gu;

/** Concepts of a line that prints a sum of the items ("Positionssumme", "Total HT", "Subtotal", "Nettobetrag"). */
const SUM_CONCEPTS: ReadonlySet<Concept> = new Set(['subtotal', 'total']);

/**
 * Whether the sum is printed below the table, or other amounts only, or no amount at all
 * (nothing to check). A sum printed on a line labelled as one (the items' sum, the net
 * total, the total) is the table's own: when such lines print amounts and none is the sum,
 * the rows are not the table's, whatever other figure below happens to equal their sum (a
 * tax base, an item's amount on the next page).
 */
function printedBelow(sum: number, doc: Doc, from: number): 'sum' | 'other' | 'none' {
  let other = false;
  let labelled = false;
  let unlabelled = false;
  for (let i = from; i < doc.scope.length; i++) {
    const cells = doc.scope[i]?.cells ?? [];
    const sumLine = cells.some((c) => isSumLabel(c.text, doc));
    for (const cell of cells) {
      for (const m of cell.text.replaceAll('−', '-').matchAll(NUMBER)) {
        const v = parseValue('decimal', m[0], doc.hints);
        if (typeof v !== 'number') continue;
        const amount = looksLikeAmount(m[0]);
        if (Math.abs(Math.abs(v) - Math.abs(sum)) < 0.005) {
          if (sumLine) return 'sum';
          unlabelled = true;
        }
        other ||= amount;
        labelled ||= sumLine && amount;
      }
    }
  }
  if (labelled) return 'other';
  if (unlabelled) return 'sum';
  return other ? 'other' : 'none';
}

export function isSumLabel(text: string, doc: Doc): boolean {
  const m = doc.labels.match(text);
  return m !== null && [...m.concepts].some((c) => SUM_CONCEPTS.has(c));
}

/**
 * A table whose amount column names no field ("Price w/o Tax" under a definition that asks
 * for no amount) still prints the amount each row's quantity × unit price must make. Once
 * one row's product is an amount printed on it (the layout vouches that such a column holds
 * the rows' amounts), a row whose product is none of its printed amounts loses its quantity
 * and unit price: one of them was misread ("455€" for "4.55 €").
 */
function checkUnnamedAmounts(
  rows: ReadonlyArray<CheckedRow | null>,
  out: Results[],
  quantity: string | undefined,
  price: string | undefined,
): void {
  if (quantity === undefined || price === undefined) return;
  const figures = rows.map((r) => {
    if (r === null) return null;
    const q = r.values[quantity];
    const p = r.values[price];
    return typeof q === 'number' && typeof p === 'number' && (r.amounts ?? []).length > 0 ? { q, p } : null;
  });
  const matches = (i: number): boolean => {
    const f = figures[i];
    const row = rows[i];
    return f != null && row != null && (row.amounts ?? []).some((a) => productIs(f.q, f.p, a, row.rates));
  };
  if (!figures.some((_, i) => matches(i))) return;
  for (const [i, f] of figures.entries()) {
    const values = out[i];
    if (f === null || !values || matches(i)) continue;
    values[quantity] = null;
    values[price] = null;
  }
}
