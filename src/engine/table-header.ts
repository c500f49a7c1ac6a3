import type { LeafField, TableField } from '../contract/index.ts';
import { columnConceptOf } from './label-forms.ts';
import type { FieldPath } from './types.ts';
import { nameWords } from './words.ts';
import { type Cell, overlap } from './layout.ts';
import type { Doc, ScopeLine } from './scope.ts';
import { namesOtherColumn } from './vocabulary/columns.ts';
import { anyOf } from './vocabulary/role-words.ts';

/**
 * The header row of a table: a line whose cells are column titles, with the title lines
 * printed just above and below it ("Prix" over "unitaire", "Art-Nr" under "Pos"), which
 * are one header on several baselines. Each column title is matched to one of the Table
 * field's columns by its labels and the column vocabulary (vocabulary/columns.ts); titles
 * that name none ("Pos.", "USt. %") stay as columns of their own, so the values under
 * them are never given to a neighbour.
 */

/** A column of the header: where it stands, its title, and the Table field's column it names, if any. */
export type Column = { x0: number; x1: number; title: string; field: LeafField | null };
/**
 * `at` is the header's main line, `last` the last line of its band: rows start below it.
 * `twofold`: fields that two columns answer (a net and a gross amount): their values are null.
 */
export type Header = { at: number; last: number; columns: Column[]; matched: Set<string>; twofold: Set<string> };

/** Title lines closer than this many text heights to the header line belong to it. */
const BAND_EM = 1.5;

/** "Einzel/€", "Gesamt (EUR)": a currency after a title says what the column is in. */
const CURRENCY_SUFFIX = /\s*[/(]?\s*(?:€|EUR|\$|USD|£|GBP|CHF)\s*\)?\s*$/u;

export function findHeaders(field: TableField, path: FieldPath, doc: Doc): Header[] {
  const need = Math.min(2, field.columns.length);
  const headers: Header[] = [];
  for (let at = 0; at < doc.scope.length; at++) {
    const header = headerAt(at, field, path, doc);
    if (!header || header.matched.size < need) continue;
    if (summaryOfTotals(header, field)) continue;
    const previous = headers.at(-1);
    // Two lines of one band each read as the header: keep the reading that names more columns.
    if (previous && header.at <= previous.last) {
      if (header.matched.size > previous.matched.size) headers[headers.length - 1] = header;
      continue;
    }
    headers.push(header);
  }
  return headers;
}

function headerAt(at: number, field: TableField, path: FieldPath, doc: Doc): Header | null {
  const main = doc.scope[at];
  if (!main || main.cells.length === 0 || !isTitleLine(main)) return null;
  let first = at;
  let last = at;
  while (neighbour(doc, first, first - 1)) first -= 1;
  while (neighbour(doc, last, last + 1)) last += 1;
  // Each title of the main line with the band's parts standing over or under it.
  const groups: Cell[][] = main.cells.map((c) => [c]);
  for (let i = first; i <= last; i++) {
    if (i === at) continue;
    for (const cell of doc.scope[i]?.cells ?? []) {
      const owner = groups.find((g) => g.some((part) => overlap(part, cell) > 0));
      if (owner) owner.push(cell);
      else groups.push([cell]);
    }
  }
  const columns: Column[] = [];
  const matched = new Set<string>();
  for (const group of groups) {
    const x0 = Math.min(...group.map((c) => c.x0));
    const x1 = Math.max(...group.map((c) => c.x1));
    const named = nameColumn(group, field, path, doc);
    if (named === 'twice') return null;
    if (named && matched.has(named.name)) return null; // two columns with one name: no reading is sure
    if (named) matched.add(named.name);
    columns.push({ x0, x1, title: group.map((c) => c.text).join(' '), field: named });
  }
  columns.sort((a, b) => a.x0 - b.x0);
  return { at, last, columns, matched, twofold: twofold(columns) };
}

/** A column titled only as a total ("Total", "Summe", "Gesamt"): the last column of a table of totals as well as of items. */
const TOTALS_TITLE = new RegExp(`^${anyOf('totalsTitlePatterns')}\\s*[:.]?$`, 'iu');

/**
 * A table of totals ("Rate │ Net │ VAT │ Total" over a row by tax rate): its amount column is
 * titled only as a total and no column names the items' descriptions, where the Table field
 * has one. Read as line items it would hide the totals from their labels and give rows that
 * are tax rates.
 */
function summaryOfTotals(header: Header, field: TableField): boolean {
  const concept = (c: LeafField) => columnConceptOf(c);
  if (!field.columns.some((c) => concept(c) === 'description')) return false;
  if (header.columns.some((c) => c.field !== null && concept(c.field) === 'description')) return false;
  return header.columns.some(
    (c) =>
      c.field !== null && concept(c.field) === 'line_amount' && TOTALS_TITLE.test(c.title.replace(CURRENCY_SUFFIX, '')),
  );
}

/** "Brutto", "Gesamt inkl. MwSt.", "Gross", "Montant TTC": amounts with the tax in. */
const GROSS = new RegExp(`(?:^|[^\\p{L}])${anyOf('grossTitlePatterns')}`, 'iu');
/** "Netto", "Net", "Montant HT", "excl. VAT", "zzgl.": amounts before tax. */
const NET = new RegExp(`(?:^|[^\\p{L}])${anyOf('netTitlePatterns')}(?:$|[^\\p{L}]|o?\\p{Ll})`, 'iu');
const PRICE = new RegExp(anyOf('priceTitlePatterns'), 'iu');

/**
 * Fields that a net and a gross column both answer, when the field's name says neither
 * ("amount" under "Netto" and "Brutto"): which one was meant is a guess. A name that says
 * which ("net_amount") keeps the column that matches it.
 */
function twofold(columns: readonly Column[]): Set<string> {
  const out = new Set<string>();
  for (const gross of columns.filter((c) => GROSS.test(c.title))) {
    const concept = PRICE.test(gross.title) ? 'unit_price' : 'line_amount';
    const sameKind = (c: Column) => (c.field ? columnConceptOf(c.field) === concept : false);
    for (const net of columns) {
      if (net === gross || GROSS.test(net.title) || !(sameKind(net) || (NET.test(net.title) && sameKind(gross))))
        continue;
      const field = gross.field ?? net.field;
      if (!field) continue;
      const says = nameWords(field.name);
      const saysNet = says.some((w) => w === 'net' || w === 'netto');
      const saysGross = says.some((w) => w === 'gross' || w === 'brutto');
      if ((saysNet && field === gross.field) || (saysGross && field === net.field) || (!saysNet && !saysGross))
        out.add(field.name);
    }
  }
  return out;
}

/**
 * The column a title names: the whole title read top to bottom, else exactly one of its
 * parts, else one title of a cell that holds two ("Menge Einheit": the quantity and its unit).
 */
function nameColumn(group: Cell[], field: TableField, path: FieldPath, doc: Doc): LeafField | null | 'twice' {
  const whole = columnOf(group.map((c) => c.text).join(' '), field, path, doc);
  if (whole) return whole;
  const parts = group.map((c) => columnOf(c.text, field, path, doc)).filter((c) => c !== null);
  if (parts.length > 1) return 'twice';
  if (parts[0]) return parts[0];
  const merged = group.map((c) => mergedTitles(c.text, field, path, doc)).filter((c) => c !== null);
  if (merged.length > 1 || merged.includes('twice')) return 'twice';
  return merged[0] ?? null;
}

/**
 * A cell that holds two column titles side by side ("Menge Einheit", "Pos. Produkt"): the
 * column one of them names, when the other is a title of a column the field does not ask
 * for (vocabulary/columns.ts). Two that each name one of the field's columns: the values
 * under the cell cannot be told apart. Any other words ("Price w/o"): no reading. A price or
 * an amount with another title beside it is that other's money ("Tax Amount", "MwSt Betrag",
 * "Rabatt Betrag": the tax or the discount of the line), not the column's: no reading.
 */
function mergedTitles(text: string, field: TableField, path: FieldPath, doc: Doc): LeafField | null | 'twice' {
  const words = text.trim().split(/\s+/u);
  if (words.length < 2 || words.length > 4) return null;
  const plain = (c: LeafField | null) => (c && !isMoney(c) ? c : null);
  for (let k = 1; k < words.length; k++) {
    const [head, tail] = [words.slice(0, k).join(' '), words.slice(k).join(' ')];
    const first = columnOf(head, field, path, doc);
    // With no column named by the head and no other column's title there, the tail decides nothing.
    if (!first && !namesOtherColumn(head)) continue;
    const second = columnOf(tail, field, path, doc);
    if (first && second) return first === second ? first : 'twice';
    if (first && namesOtherColumn(tail)) return plain(first);
    if (second && namesOtherColumn(head)) return plain(second);
  }
  return null;
}

function isMoney(c: LeafField): boolean {
  const concept = columnConceptOf(c);
  return concept === 'unit_price' || concept === 'line_amount';
}

function columnOf(title: string, field: TableField, path: FieldPath, doc: Doc): LeafField | null {
  const m = doc.labels.match(title.replace(CURRENCY_SUFFIX, ''));
  if (m?.kind !== 'clean' || m.rest !== '' || m.box !== undefined || m.extra !== undefined) return null;
  const named = field.columns.filter((c) => m.owners.has(`${path}[].${c.name}`));
  return named.length === 1 ? (named[0] ?? null) : null;
}

/** Whether line `to` is a title line printed close enough to line `from` to share its header. */
function neighbour(doc: Doc, from: number, to: number): boolean {
  const a = doc.scope[from];
  const b = doc.scope[to];
  if (!a || !b || b.cells.length === 0 || a.line.page !== b.line.page || !isTitleLine(b)) return false;
  return Math.abs(b.line.y - a.line.y) <= BAND_EM * Math.max(a.line.height, b.line.height);
}

/** Titles carry no figures: a line with a digit is a row, an address or a date, not a header. */
function isTitleLine(sl: ScopeLine): boolean {
  return sl.cells.every((c) => !/\d/.test(c.text));
}
