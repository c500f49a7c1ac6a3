import type { LeafField, TableField } from '../contract/index.ts';
import type { FieldPath } from './labels.ts';
import { type Cell, overlap } from './layout.ts';
import type { Doc, ScopeLine } from './scope.ts';

/**
 * The header row of a table: a line whose cells are column titles, with the title lines
 * printed just above and below it ("Prix" over "unitaire", "Art-Nr" under "Pos"), which
 * are one header on several baselines. Each column title is matched to one of the Table
 * field's columns by its labels and the column vocabulary (vocabulary/columns.ts); titles
 * that name none ("Pos.", "USt. %") stay as columns of their own, so the values under
 * them are never given to a neighbour.
 */

/** A column of the header: where it stands, and the Table field's column it names, if any. */
export type Column = { x0: number; x1: number; field: LeafField | null };
/** `at` is the header's main line, `last` the last line of its band: rows start below it. */
export type Header = { at: number; last: number; columns: Column[]; matched: Set<string> };

/** Title lines closer than this many text heights to the header line belong to it. */
const BAND_EM = 1.5;

/** "Einzel/€", "Gesamt (EUR)": a currency after a title says what the column is in. */
const CURRENCY_SUFFIX = /\s*[/(]?\s*(?:€|EUR|\$|USD|£|GBP|CHF)\s*\)?\s*$/u;

export function findHeaders(field: TableField, path: FieldPath, doc: Doc): Header[] {
  const need = Math.min(2, field.columns.length);
  const headers: Header[] = [];
  for (let at = 0; at < doc.scope.length; at++) {
    const header = headerAt(at, field, path, doc);
    if (!header || header.matched.size < need || header.matched.size * 2 < header.columns.length) continue;
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
    columns.push({ x0, x1, field: named });
  }
  columns.sort((a, b) => a.x0 - b.x0);
  return { at, last, columns, matched };
}

/** The column a title names: the whole title read top to bottom, else exactly one of its parts. */
function nameColumn(group: Cell[], field: TableField, path: FieldPath, doc: Doc): LeafField | null | 'twice' {
  const whole = columnOf(group.map((c) => c.text).join(' '), field, path, doc);
  if (whole) return whole;
  const parts = group.map((c) => columnOf(c.text, field, path, doc)).filter((c) => c !== null);
  if (parts.length > 1) return 'twice';
  return parts[0] ?? null;
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
