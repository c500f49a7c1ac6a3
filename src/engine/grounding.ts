import type { FieldDefinition, LeafField, LeafValue, Results } from '../contract/index.ts';
import { parseDate } from './dates.ts';
import { isIdentifierName, opensWithVatId, readIban, readIdentifier, readVatId } from './identifiers.ts';
import { type Cell, type Line, linePitch, overlap } from './layout.ts';
import { cellBelow, dateUnder, inKeyColumn, keyLabel, lineBelow, rightOf, soleDateBelow } from './neighbours.ts';
import { type FieldPath, type LabelMatch, nameWords, normaliseWord } from './labels.ts';
import { blocksOf, fillParty } from './parties.ts';
import { isCountryCode } from './party-lines.ts';
import { type Doc, type ScopeLine, lineKey } from './scope.ts';
import {
  type CellsByLine,
  byLine,
  cellsLabelling,
  cellsWithTerms,
  labelledCells,
  linesOfLabels,
} from './scope-index.ts';
import { roleFor, summaryBelow, taxOfRateRow } from './summary.ts';
import { type Rival, checkSums } from './sums.ts';
import { type TableRead, placeOf, readTable } from './tables.ts';
import type { Grounding, Place } from './types.ts';
import { dueDatesIn, isDiscount } from './terms.ts';
import { currenciesOfAmounts, looksLikeAmount, parseValue } from './values.ts';
import { type Concept, IDENTIFIER_CONCEPTS } from './vocabulary/index.ts';

/**
 * Grounding: a field gets a value only when a label of that field stands before it on the
 * same line, or directly above it in the same column, and the value parses as the field's
 * type. Everything else is null. Where the document offers two different values for one
 * field, or a labelled value that does not parse, the answer is null too: the engine
 * never picks one.
 */

/**
 * A value seen for a field: strong when the label announces it, weak when only found below;
 * its tier is the label's (the best tier that finds anything decides); `at` is where it is.
 */
type Candidate = {
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
/** The tax of one rate row that its arithmetic vouches for (summary.ts `taxOfRateRow`): below every label. */
const RATE_ROW_TIER = 3;
/** What a tax label's cell may end with when its rate is printed in it ("MwSt. 19%", "VAT 20 %"). */
const RATE_REST = /^(\d{1,2}(?:[.,]\d{1,2})?)\s*%$/u;

/** Words after a total's label that make it another amount ("Total net", "Gesamtbetrag der Zuschläge"). */
const QUALIFIERS = new Set([
  'net',
  'netto',
  'nett',
  'excl',
  'exkl',
  'excluding',
  'exclusive',
  'ohne',
  'hors',
  'ht',
  'sans',
  'before',
  'vor',
  'pre',
  'subtotal',
  'tax',
  'taxes',
  'vat',
  'tva',
  'ust',
  'mwst',
  'iva',
  'btw',
  'gst',
  'steuer',
  'discount',
  'discounts',
  'rabatt',
  'rabatte',
  'remise',
  'remises',
  'skonto',
  'paid',
  'bezahlt',
  'paye',
  'payments',
  'payment',
  'anzahlung',
  'anzahlungen',
  'acompte',
  'deposit',
  'shipping',
  'versand',
  'fracht',
  'freight',
  'livraison',
  'delivery',
  'items',
  'item',
  'lines',
  'line',
  'positions',
  'position',
  'quantity',
  'qty',
  'menge',
  'pieces',
  'weight',
  'gewicht',
  'previous',
  'prior',
  'hours',
  'stunden',
  'units',
  'unit',
  'per',
  'zuschlage',
  'zuschlag',
  'abschlage',
  'abschlag',
  'surcharge',
  'surcharges',
  'fees',
  'fee',
  'charges',
  'credit',
  'credits',
  'gutschrift',
  'savings',
  'rounding',
  'rundung',
  'base',
  'basis',
  'der',
  'des',
  'of',
  'du',
  'de',
  'la',
  'dei',
  'delle',
  'van',
  'saved',
  'outstanding',
  'overdue',
  'last',
  'month',
  'year',
]);
const INCLUSIVE = new Set([
  'incl',
  'inkl',
  'including',
  'inklusive',
  'inclusive',
  'ttc',
  'brutto',
  'gross',
  'with',
  'mit',
]);

function extendedTotalFits(extra: string): boolean {
  const words = extra
    .split(/[\s\-/.']+/)
    .map(normaliseWord)
    .filter((w) => w !== '');
  if (words.some((w) => INCLUSIVE.has(w)))
    return !words.some((w) => ['net', 'netto', 'excl', 'exkl', 'ohne', 'ht', 'hors'].includes(w));
  return !words.some((w) => QUALIFIERS.has(w));
}

export function groundDefinition(fields: FieldDefinition, doc: Doc): { results: Results; grounding: Grounding } {
  const tables = new Map<FieldPath, TableRead>();
  const tableLines = new Set<string>();
  collectTables(fields, '', doc, tables, tableLines);
  // Without a table's lines (most documents) the scope is the whole: no key made per line to find none.
  const scope = tableLines.size === 0 ? doc.scope : doc.scope.filter((sl) => !tableLines.has(lineKey(sl.line)));
  const tableTotals = new Map([...tables.values()].flatMap((t) => [...t.totals]));
  const grounding: Grounding = {};
  const results = groundFields(fields, '', '', { ...doc, scope, whole: doc.scope, tableTotals }, tables, grounding);
  return { results, grounding };
}

function collectTables(
  fields: FieldDefinition,
  prefix: string,
  doc: Doc,
  out: Map<FieldPath, TableRead>,
  lines: Set<string>,
): void {
  for (const f of fields) {
    const path = prefix + f.name;
    if (f.type === 'table') {
      const read = readTable(f, path, doc);
      out.set(path, read);
      for (const k of read.lines) lines.add(k);
    } else if (f.type === 'object') {
      collectTables(f.fields, `${path}.`, doc, out, lines);
    }
  }
}

function groundFields(
  fields: FieldDefinition,
  prefix: string,
  outPrefix: string,
  doc: Doc,
  tables: Map<FieldPath, TableRead>,
  grounding: Grounding,
): Results {
  const out: Results = {};
  /** Decimal fields no label offered any value for, and those whose labels offered rival values. */
  const unlabelled: string[] = [];
  const rivals = new Map<string, readonly Rival[]>();
  for (const f of fields) {
    const path = prefix + f.name;
    const outPath = outPrefix + f.name;
    if (f.type === 'table') {
      const read = tables.get(path);
      out[f.name] = read?.rows ?? null;
      for (const [i, row] of (read?.places ?? []).entries()) {
        for (const [column, place] of Object.entries(row)) grounding[`${outPath}[${i}].${column}`] = place;
      }
    } else if (f.type === 'object') {
      const blocks = blocksOf(path, doc);
      const inner = groundFields(
        f.fields,
        `${path}.`,
        `${outPath}.`,
        { ...doc, scope: blocks.flat() },
        tables,
        grounding,
      );
      fillParty(f, path, outPath, inner, blocks, doc, grounding);
      out[f.name] = inner;
    } else {
      let found = groundLeaf(f, path, doc);
      if (found.value === null && prefix === '' && doc.labels.conceptOf.get(path) === 'currency')
        found = { ...(currencyOfAmounts(path, doc) ?? found), offered: found.offered };
      if (found.value === null && !found.offered && prefix === '' && f.type === 'decimal') unlabelled.push(f.name);
      if (found.rivals && prefix === '') rivals.set(f.name, found.rivals);
      out[f.name] = found.value;
      if (found.value !== null && found.at) grounding[outPath] = found.at;
    }
  }
  if (prefix === '') checkSums(fields, out, rivals, unlabelled, doc, grounding);
  return out;
}

function groundLeaf(
  field: LeafField,
  path: FieldPath,
  doc: Doc,
): { value: LeafValue; at: Place | undefined; offered: boolean; rivals?: Rival[] } {
  const vetoes: string[] = [];
  const all = candidates(field, path, doc, vetoes);
  const offered = all.length > 0;
  const found = decide(field, all, vetoes, doc);
  if (found.value !== null) return { ...found, offered };
  const ranked = byVocabularyRank(all, doc.labels.conceptOf.get(path));
  return { ...(ranked ? decide(field, ranked, vetoes, doc) : found), offered, rivals: found.rivals };
}

/**
 * A user's labels of equal rank that disagree ("Gesamtbetrag" and "Zahlbetrag" both aliases,
 * and a deposit between them): the vocabulary's own ranking of those labels for the field's
 * concept (or the one concept they share) decides, as it does for the built-in fields, with
 * the same checks. Labels the vocabulary does not rank for it: no ranking.
 */
function byVocabularyRank(all: Candidate[], concept: Concept | undefined): Candidate[] | null {
  const own = all.filter((c) => c.tier === 0);
  if (own.length < 2) return null;
  let shared = concept;
  if (shared === undefined) {
    const common = [...(own[0]?.ranks?.keys() ?? [])].filter((k) => own.every((c) => c.ranks?.has(k)));
    if (common.length !== 1) return null;
    shared = common[0];
  }
  const ranked: Candidate[] = [];
  for (const c of own) {
    const rank = shared === undefined ? undefined : c.ranks?.get(shared);
    if (rank === undefined) return null;
    ranked.push({ ...c, tier: rank });
  }
  return ranked;
}

function decide(
  field: LeafField,
  all: Candidate[],
  vetoes: string[],
  doc: Doc,
): { value: LeafValue; at: Place | undefined; rivals?: Rival[] } {
  const best = Math.min(Infinity, ...all.map((c) => c.tier));
  const values = new Set<string>();
  let found: { value: LeafValue; at: Place | undefined } = { value: null, at: undefined };
  const rivals: Rival[] = [];
  for (const c of all) {
    if (c.tier !== best) continue;
    const value = c.parsed !== undefined ? c.parsed : parseValue(field.type, c.text, doc.hints);
    if (value === null) {
      if (c.strong) return { value: null, at: undefined }; // a labelled value that is not of the field's type
      continue;
    }
    values.add(JSON.stringify(value));
    found = { value, at: c.at };
    if (typeof value === 'number') rivals.push({ value, at: c.at });
  }
  // Labels of one rank that disagree: no value, and their amounts for the sums' check (sums.ts).
  if (values.size !== 1) return { value: null, at: undefined, ...(values.size > 1 ? { rivals } : {}) };
  if (field.type === 'date' && vetoes.some((v) => parseDate(v, doc.hints.dateOrder) !== found.value))
    return { value: null, at: undefined };
  if (best < 2 && typeof found.value === 'number' && !dueAgrees(found.value, all, field, doc))
    return { value: null, at: undefined };
  return found;
}

/**
 * A total with an amount due that differs ("Total TTC 671,15", "Solde à payer 470,15") is
 * kept only when the document prints the difference (a deposit of 201,00): two totals that
 * disagree for no reason the page shows make the field null.
 */
function dueAgrees(total: number, all: Candidate[], field: LeafField, doc: Doc): boolean {
  const dues = new Set<number>();
  for (const c of all) {
    if (c.tier !== 2) continue;
    const v = parseValue(field.type, c.text, doc.hints);
    if (typeof v === 'number' && Math.abs(v - total) >= 0.005) dues.add(v);
  }
  if (dues.size === 0) return true;
  if (dues.size > 1) return false;
  const [due = 0] = dues;
  const gap = Math.abs(total - due);
  for (const sl of doc.scope) {
    for (const cell of sl.cells) {
      for (const m of cell.text.matchAll(/-?\(?[\d][\d.,' \u00a0]*\d\)?/g)) {
        const v = parseValue('decimal', m[0], doc.hints);
        if (typeof v === 'number' && Math.abs(Math.abs(v) - gap) < 0.005) return true;
      }
    }
  }
  return false;
}

/**
 * The currency of a document that labels none: the one its amounts' marks name, when every
 * mark names the same ("529,87 €" throughout). A mark of several ("$") or two currencies: null.
 */
function currencyOfAmounts(path: FieldPath, doc: Doc): { value: LeafValue; at: Place | undefined } | null {
  // A label of the field printed anywhere: not this rule's to answer.
  if (cellsLabelling(path, doc).length > 0) return null;
  const seen = new Map<string, Place>();
  for (const sl of doc.scope) {
    for (const cell of sl.cells) {
      for (const currency of currenciesOfAmounts(cell.text)) seen.set(currency, placeOf(sl.line, cell));
    }
  }
  const [[value, at] = ['?', undefined]] = seen;
  return seen.size === 1 && value !== '?' ? { value, at } : null;
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
function candidates(field: LeafField, path: FieldPath, doc: Doc, vetoes: string[]): Candidate[] {
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

/**
 * A text value that wraps onto the lines just above or below it, closer than the page's
 * line pitch, with its label centred beside them ("MVM Musterhafter" / "Name: │ Versicherungsverein
 * Musterstadt a.G."): all of its lines. Other types and identifiers are one line.
 */
function wrapped(field: LeafField, sl: ScopeLine, value: Cell, label: Cell, doc: Doc): string {
  if (field.type !== 'string') return value.text;
  const scope = doc.whole ?? doc.scope;
  const at = scope.findIndex((w) => w.line === sl.line);
  if (at < 0) return value.text;
  const pitch = linePitch(scope.filter((w) => w.line.page === sl.line.page).map((w) => w.line));
  const parts = [value.text];
  for (const step of [-1, 1]) {
    let previous = sl.line;
    for (let k = at + step; k >= 0 && k < scope.length; k += step) {
      const next = scope[k];
      if (!next || next.line.page !== sl.line.page || Math.abs(next.line.y - previous.y) >= 0.8 * pitch) break;
      const under = next.cells.filter((c) => overlap(c, value) > 0);
      const [c] = under;
      if (!c || under.length !== 1 || next.cells.some((o) => overlap(o, label) > 0)) break;
      // A country code under a name is the address's last line ("Lieferant GmbH" over "DE"), not the name's.
      if (doc.labels.isLabelled(c.text) || isCountryCode(c.text)) break;
      if (step < 0) parts.unshift(c.text);
      else parts.push(c.text);
      previous = next.line;
    }
  }
  return parts.join(' ');
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

/** The cells right of a label on its line that read as numbers, in order. */
function numbersAfter(sl: ScopeLine, j: number, field: LeafField, doc: Doc): Array<Cell & { value: number }> {
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
function totalOfRow(row: Array<Cell & { value: number }>): (Cell & { value: number }) | undefined {
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

/**
 * A label stands in a table's header row when its row has three cells or more and another
 * of them is text that is no key of the definition: a column title ("Montant"), or the
 * label of a table's column ("Price"). A header whose titles wrap onto several lines
 * ("Price w/o" over "Tax") is one row: lines closer than their text's height belong to it.
 */
function inHeaderRow(sl: ScopeLine, j: number, doc: Doc): boolean {
  const scope = doc.whole ?? doc.scope;
  const at = scope.findIndex((w) => w.line === sl.line);
  const label = sl.cells[j];
  const others = sl.cells.filter((_, k) => k !== j);
  const span = { x0: Math.min(...sl.cells.map((c) => c.x0)), x1: Math.max(...sl.cells.map((c) => c.x1)) };
  for (const step of at < 0 ? [] : [-1, 1]) {
    let previous = sl.line;
    for (let k = at + step; k >= 0 && k < scope.length; k += step) {
      const next = scope[k];
      if (!next || next.line.page !== sl.line.page) break;
      if (Math.abs(next.line.y - previous.y) >= Math.max(next.line.height, previous.height)) break;
      // Only what wraps under the row's own span: another column's text beside it is no title.
      others.push(...next.cells.filter((c) => c.x1 > span.x0 && c.x0 < span.x1));
      previous = next.line;
    }
  }
  if (others.length < 2) return false;
  return others.some((c) => c !== label && !/\d/.test(c.text) && !keyLabel(c.text, doc));
}
