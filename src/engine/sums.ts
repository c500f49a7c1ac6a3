import type { FieldDefinition, Results } from '../contract/index.ts';
import type { Doc } from './scope.ts';
import { RATE_REST, printedSum } from './summary.ts';
import { parseValue } from './values.ts';
import { placeOf } from './tables.ts';
import type { Grounding, Place } from './types.ts';
import type { Concept } from './vocabulary/index.ts';

/**
 * The invoice's sums checked by their arithmetic, wherever the page prints the parts: the
 * net total plus the tax is the gross total. Labels alone cannot always tell a net sum from
 * a gross one ("Subtotaal" over the gross amount, "Positionssumme" beside "Rechnungssumme
 * ohne USt."); the sum can. It picks, among the values labels of equal rank offered for one
 * field, the one that makes the sum hold, and it nulls the parts that a read total refutes.
 */

/** Values labels of equal rank offered for an amount field, which disagreed: its rivals. */
export type Rival = { value: number; at: Place | undefined };

/** Amounts within a cent are equal (printed amounts are rounded to cents). */
const CENT = 0.005;
const equal = (a: number, b: number) => Math.abs(a - b) < CENT;

/**
 * `rivals`: by field name, the values a top-level amount field was offered and refused for
 * their disagreement. `unlabelled`: amount fields no label offered anything.
 */
export function checkSums(
  fields: FieldDefinition,
  out: Results,
  rivals: ReadonlyMap<string, readonly Rival[]>,
  unlabelled: readonly string[],
  doc: Doc,
  grounding: Grounding,
): void {
  const byConcept = (c: Concept) => fields.find((f) => doc.labels.conceptOf.get(f.name) === c)?.name;
  const [net, tax, total] = [byConcept('subtotal'), byConcept('tax'), byConcept('total')];
  if (!net || !tax || !total) return;
  const amount = (name: string) => {
    const v = out[name];
    return typeof v === 'number' ? v : undefined;
  };
  const set = (name: string, value: number | null, at?: Place) => {
    out[name] = value;
    if (value !== null && at) grounding[name] = at;
    else delete grounding[name];
  };
  // A rival of one part that makes the sum hold with the two others read: "Subtotaal 121,00"
  // (gross) beside "Exclusief BTW 100,00", with "BTW 21,00" and "Totaal 121,00".
  const pick = (name: string, want: (s: number, t: number, g: number) => number | undefined) => {
    if (amount(name) !== undefined) return;
    const [s, t, g] = [amount(net), amount(tax), amount(total)];
    const target = want(s ?? Number.NaN, t ?? Number.NaN, g ?? Number.NaN);
    if (target === undefined || Number.isNaN(target)) return;
    const fits = (rivals.get(name) ?? []).filter((r) => equal(r.value, target));
    const [only] = fits;
    if (only && fits.every((r) => equal(r.value, only.value))) set(name, only.value, only.at);
  };
  // The parts only: two totals that disagree are two claims about what is owed, and stay null.
  pick(net, (_, t, g) => g - t);
  pick(tax, (s, _, g) => g - s);
  // A total no label names ("Due payable: 571.04 €"): the one amount printed that is the sum of the parts.
  const [s, t, g] = [amount(net), amount(tax), amount(total)];
  if (t === undefined && s !== undefined && g !== undefined) {
    const rated = taxOfRateLine(s, g, doc);
    if (rated) set(tax, rated.value, rated.at);
    if (rated) return;
  }
  if (g === undefined && s !== undefined && t !== undefined && unlabelled.includes(total)) {
    const found = printedSum(s + t, doc);
    if (found) set(total, found.value, found.at);
    return;
  }
  if (s === undefined || t === undefined || g === undefined || equal(s + t, g)) return;
  // The parts disagree with the total. A "subtotal" equal to the total, with a tax, is a gross sum.
  if (equal(s, g) && !equal(t, 0)) {
    set(net, null);
    return;
  }
  // A difference the page prints (shipping, a rounding, a deposit) may explain it; otherwise no guess.
  if (printedSum(Math.abs(g - s - t), doc)) return;
  set(net, null);
  set(tax, null);
}

/**
 * "VAT 20% │ 78.22" with no base printed: the tax of the one rate line whose amount is both
 * the read net times the rate (to the cent) and the read total less the net. Two checks the
 * page's own numbers make; a second line that passes them (or none) gives no tax.
 */
function taxOfRateLine(net: number, total: number, doc: Doc): { value: number; at: Place } | undefined {
  const tax = total - net;
  if (!(tax > CENT)) return undefined;
  const found: Array<{ value: number; at: Place }> = [];
  for (const sl of doc.scope) {
    const j = sl.cells.findIndex((c) => {
      const m = doc.labels.match(c.text);
      return m?.concepts.has('tax') === true && RATE_REST.test(m.rest);
    });
    const head = sl.cells[j];
    const after = sl.cells.slice(j + 1);
    const [cell] = after;
    if (!head || !cell || after.length !== 1) continue;
    const rate = Number(RATE_REST.exec(doc.labels.match(head.text)?.rest ?? '')?.[1]?.replace(',', '.'));
    const value = parseValue('decimal', cell.text, doc.hints);
    if (typeof value !== 'number' || !(rate > 0) || !equal(value, tax)) continue;
    if (Math.abs((net * rate) / 100 - value) <= CENT + 1e-9) found.push({ value, at: placeOf(sl.line, cell) });
  }
  return found.length === 1 ? found[0] : undefined;
}
