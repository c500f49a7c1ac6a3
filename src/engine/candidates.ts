import type { LeafField, LeafValue } from '../contract/index.ts';
import { parseDate } from './dates.ts';
import { isIdentifierName, opensWithVatId, readIban, readIdentifier, readVatId } from './identifiers.ts';
import type { LabelMatch } from './labels.ts';
import type { Cell, Line } from './layout.ts';
import {
  cellBelow,
  dateUnder,
  inHeaderRow,
  inKeyColumn,
  lineBelow,
  rightOf,
  soleDateBelow,
  wrapped,
} from './neighbours.ts';
import { type Doc, lineKey } from './scope.ts';
import {
  type CellsByLine,
  byLine,
  cellsLabelling,
  cellsWithTerms,
  labelledCells,
  linesOfLabels,
} from './scope-index.ts';
import { RATE_REST, numbersAfter, roleFor, summaryBelow, taxOfRateRow, totalOfRow } from './summary.ts';
import { placeOf } from './tables.ts';
import { dueDatesIn, isDiscount } from './terms.ts';
import type { FieldPath, Place } from './types.ts';
import { looksLikeAmount, parseValue } from './values.ts';
import { type Concept, IDENTIFIER_CONCEPTS } from './vocabulary/index.ts';
import { INCLUSIVE, NET_NOT_INCLUSIVE, NOT_TOTAL } from './vocabulary/role-words.ts';
import { nameWords, normaliseWord } from './words.ts';

/**
 * The values a document offers for one leaf field, each with its label's tier: beside or
 * under the field's own labels, and the weaker readings below every label (payment terms, a
 * summary table's last row, one rate's tax row). grounding.ts decides among them.
 */

/**
 * A value seen for a field: strong when the label announces it, weak when only found below;
 * its tier is the label's (the best tier that finds anything decides); `at` is where it is.
 */
export type Candidate = {
  text: string;
  strong: boolean;
  tier: number;
  at: Place | undefined;
  parsed?: LeafValue;
  /** The vocabulary's ranks of the label that gave it. */
  ranks?: ReadonlyMap<Concept, 1 | 2>;
};

/** Extended labels of amounts ("Total for this invoice") are the weakest tier. */
const EXTENDED_TIER = 3;
/** A due date read from payment terms written as a sentence: below every label. */
const TERMS_TIER = 3;
/** The last row of a summary table of totals that its arithmetic vouches for (summary.ts): below every label. */
const SUMMARY_TIER = 3;
/** The tax of one rate row that its arithmetic vouches for (summary.ts): below every label. */
const RATE_ROW_TIER = 3;

/** Words after a total's label ('Total for this invoice'): another amount when they qualify it (the vocabulary's). */
function extendedTotalFits(extra: string): boolean {
  const words = extra
    .split(/[\s\-/.']+/)
    .map(normaliseWord)
    .filter((w) => w !== '');
  if (words.some((w) => INCLUSIVE.has(w))) return !words.some((w) => NET_NOT_INCLUSIVE.has(w));
  return !words.some((w) => NOT_TOTAL.has(w));
}

/** An identifier field: cut what follows the identifier ("vom 05.03.2018"). */
function identifierField(field: LeafField, path: FieldPath, doc: Doc): boolean {
  const concept = doc.labels.conceptOf.get(path);
  if (concept !== undefined) return IDENTIFIER_CONCEPTS.has(concept);
  return field.type === 'string' && isIdentifierName(nameWords(field.name));
}

/**
 * Every value the document offers for a field. `vetoes` collects the dates beside a date
 * label with extra words ("Date of service: 2024-02-20"): a different one vetoes the answer,
 * since the label may have meant it.
 */
export function candidates(field: LeafField, path: FieldPath, doc: Doc, vetoes: string[]): Candidate[] {
  const out: Candidate[] = [];
  const concept = doc.labels.conceptOf.get(path);
  const identifier = identifierField(field, path, doc);
  const amount = field.type === 'decimal' || field.type === 'integer';
  let ranks: ReadonlyMap<Concept, 1 | 2> | undefined;
  const push = (text: string, strong: boolean, tier: number, line: Line, cell: Cell | undefined) => {
    const c: Candidate = { text, strong, tier, at: cell ? placeOf(line, cell) : undefined, ranks };
    if (concept === 'tax' && amount && opensWithVatId(text)) return;
    if (field.type === 'string') {
      // A VAT-id label also stands before tax and company numbers ("Steuernummer", "SIRET"): only a VAT id counts.
      if (concept === 'vat_id') {
        const id = readVatId(text, false);
        if (id === null) return;
        c.parsed = id;
      } else if (concept === 'iban') c.parsed = readIban(text);
      else if (identifier) c.parsed = readIdentifier(text).id;
      else if (!stringFits(field, text)) c.parsed = null;
    }
    out.push(c);
  };
  for (const { at: i, cells } of cellsToVisit(field, path, concept, doc)) {
    const sl = doc.scope[i];
    if (!sl) continue;
    // "Nettobetrag │ MwSt-Betrag │ Endbetrag" over rows by rate and their sum: weaker than any label.
    const summary = amount && sl.cells.length >= 3 && !path.includes('.') ? summaryBelow(doc.scope, i, doc) : undefined;
    const role = summary && roleFor(concept, path, summary, doc);
    if (summary && role) {
      const { cell, line } = summary.row[role];
      out.push({ text: cell.text, strong: false, tier: SUMMARY_TIER, at: placeOf(line, cell) });
    }
    for (const j of cells) {
      const cell = sl.cells[j];
      if (!cell) continue;
      // "Bitte überweisen Sie bis zum 30.05.2017.": payment terms, weaker than any label.
      if (concept === 'due_date' && field.type === 'date')
        for (const date of dueDatesIn(cell.text, doc.hints.dateOrder))
          out.push({ text: date, strong: false, tier: TERMS_TIER, at: placeOf(sl.line, cell), parsed: date });
      const m = doc.labels.match(cell.text);
      if (!m) continue;
      ranks = m.ranks;
      // "Rechnung Nr. 42 vom 31.01.2014": the invoice's date follows its number.
      if (concept === 'invoice_date' && m.rest !== '' && numbersInvoice(m, doc)) {
        const date = readIdentifier(m.rest).date ?? dateUnder(m.rest, doc.scope, i, cell);
        if (date !== null) out.push({ text: date, strong: false, tier: 1, at: placeOf(sl.line, cell), parsed: date });
      }
      // "Facture FA-2017-0010": a title and one identifier, when no label names the number.
      if (
        concept === 'invoice_number' &&
        m.title &&
        m.rest !== '' &&
        !m.colon &&
        /^\S*\d\S*$/.test(m.rest) &&
        parseDate(m.rest) === null
      ) {
        if (/[\p{L}\-/_.]/u.test(m.rest) || m.rest.length >= 5) push(m.rest, false, 2, sl.line, cell);
      }
      const tier = m.tiers.get(path);
      if (tier === undefined) continue;
      if (m.extra !== undefined) {
        if (field.type === 'date') {
          const beside = m.rest !== '' ? m.rest : rightOf(sl, j, doc)?.text;
          if (beside !== undefined && parseDate(beside, doc.hints.dateOrder) !== null) vetoes.push(beside);
          continue;
        }
        // "Total for this invoice │ $4.11": an extended label, weakest, and only for a total.
        if (!amount || (concept !== 'total' && concept !== 'amount_due') || !extendedTotalFits(m.extra)) continue;
        const value = m.rest !== '' ? m.rest : rightOf(sl, j, doc)?.text;
        if (value !== undefined && parseValue(field.type, value, doc.hints) !== null && looksLikeAmount(value))
          push(value, true, EXTENDED_TIER, sl.line, m.rest !== '' ? cell : rightOf(sl, j, doc));
        continue;
      }
      if (m.box !== undefined) {
        if (field.type === 'boolean') push(m.box, true, tier, sl.line, cell);
        continue;
      }
      if (m.rest !== '') {
        // "MwSt. 19% │ 198,00 │ 37,62": a rate in the label, then the base and the tax its checksum vouches for.
        const rate = concept === 'tax' && amount ? RATE_REST.exec(m.rest)?.[1] : undefined;
        const [base, taxed, ...more] = rate === undefined ? [] : numbersAfter(sl, j, field, doc);
        const rated =
          rate !== undefined && base && taxed && more.length === 0
            ? taxOfRateRow([base, { ...cell, text: m.rest, value: Number(rate.replace(',', '.')) }, taxed])
            : undefined;
        if (rated) {
          push(rated.text, true, RATE_ROW_TIER, sl.line, rated);
          continue;
        }
        if (m.kind === 'clean') push(m.rest, true, tier, sl.line, cell);
        else if (looseValueFits(field, m.rest, doc)) push(m.rest, true, tier, sl.line, cell);
        continue;
      }
      const right = rightOf(sl, j, doc, amount);
      const rightText = right?.text;
      const rightParses = rightText !== undefined && parseValue(field.type, rightText, doc.hints) !== null;
      if (rightParses && amount && right) {
        // A totals row: "Total │ 3 │ 1,234.00". Only an amount the row's arithmetic supports.
        const row = numbersAfter(sl, j, field, doc);
        if (row.length > 1) {
          // The table's amount column says which number is the total when the sums cannot.
          const chosen = totalOfRow(row) ?? doc.tableTotals?.get(lineKey(sl.line));
          // A tax rate row ending base │ rate │ tax (after Warenwert, Zu-/Abschlag): one rate's tax, below every label of the tax.
          const rated = chosen || concept !== 'tax' ? undefined : taxOfRateRow(row.slice(-3));
          if (chosen) push(chosen.text, true, tier, sl.line, chosen);
          else if (rated) push(rated.text, true, RATE_ROW_TIER, sl.line, rated);
          else push('', true, tier, sl.line, undefined);
          continue;
        }
      }
      if (rightParses && m.colon && rightText !== undefined && right) {
        push(wrapped(field, sl, right, cell, doc), true, tier, sl.line, right);
        continue;
      }
      // A label in a table's header row is a column, not a key ("Règlement │ Date │ Montant"),
      // but a due-date column gives its one date past discounts' ("Beschreibung │ Fälligkeit" over the terms).
      if (!rightParses && inHeaderRow(sl, j, doc)) {
        const sole = concept === 'due_date' ? soleDateBelow(doc.scope, i, j, doc, isDiscount) : undefined;
        if (sole) push(sole.cell.text, false, tier, sole.line, sole.cell);
        continue;
      }
      // Below when the right-hand neighbour is no value of the field's type.
      const below = cellBelow(doc.scope, i, j, doc);
      const belowParses = below !== undefined && parseValue(field.type, below.text, doc.hints) !== null;
      // "Invoice Number   INV-1" above "Reference   R-7": both are values; the field is null,
      // unless the label stands in a column of keys that the vocabulary knows.
      if (rightParses && belowParses && right && inKeyColumn(doc.scope, i, cell, right, doc))
        push(wrapped(field, sl, right, cell, doc), true, tier, sl.line, right);
      else if (rightParses && belowParses) push('', true, tier, sl.line, undefined);
      else if (rightParses && right) push(wrapped(field, sl, right, cell, doc), true, tier, sl.line, right);
      else if (belowParses && below) push(below.text, false, tier, lineBelow(doc.scope, i)?.line ?? sl.line, below);
      else if (rightText !== undefined) push(rightText, true, tier, sl.line, right);
    }
  }
  return out;
}

/**
 * The cells `candidates` reads for a field, by line: the cells of its own labels; for an
 * invoice's date, labels numbering the invoice with words after them; for its number, titles;
 * for a due date, payment terms; and for a top-level amount, the lines where a summary table's
 * header may stand. Every other cell gives the field nothing, so it is not visited.
 */
function cellsToVisit(field: LeafField, path: FieldPath, concept: Concept | undefined, doc: Doc): CellsByLine {
  const lists: Array<ReadonlyArray<{ i: number; j: number }>> = [cellsLabelling(path, doc)];
  if (concept === 'invoice_date')
    lists.push(labelledCells(doc).filter((c) => c.m.rest !== '' && numbersInvoice(c.m, doc)));
  if (concept === 'invoice_number') lists.push(labelledCells(doc).filter((c) => c.m.title));
  if (concept === 'due_date' && field.type === 'date') lists.push(cellsWithTerms(doc));
  const amount = field.type === 'decimal' || field.type === 'integer';
  return byLine(lists, amount && !path.includes('.') ? linesOfLabels(doc) : []);
}

/**
 * A string value is no key ("Ship To:", "Nummer : 549910": words and a colon), and a name
 * has letters ("Customer:2" names no one).
 */
function stringFits(field: LeafField, text: string): boolean {
  if (/^\p{L}[\p{L}\p{M} .\-/]{0,40}:/u.test(text.trim())) return false;
  return nameWords(field.name).at(-1) !== 'name' || /\p{L}/u.test(text);
}

/** "Total 12.50" is a label and its value; "Net 30" (payment terms) and "Total items: 3" are not. */
function looseValueFits(field: LeafField, rest: string, doc: Doc): boolean {
  if (field.type === 'string' || field.type === 'boolean') return false;
  if (parseValue(field.type, rest, doc.hints) === null) return false;
  return field.type === 'decimal' ? looksLikeAmount(rest) : true;
}

/** Whether a label's cell also numbers the invoice ("Rechnung Nr.", "Invoice #", the user's own label of it). */
function numbersInvoice(m: LabelMatch, doc: Doc): boolean {
  if (m.concepts.has('invoice_number')) return true;
  return [...m.owners].some((o) => doc.labels.conceptOf.get(o) === 'invoice_number');
}
