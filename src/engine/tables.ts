import type { LeafField, LeafValue, Results, TableField } from '../contract/index.ts';
import type { Cell, Line } from './layout.ts';
import { overlap } from './layout.ts';
import type { Place } from './types.ts';
import type { FieldPath } from './labels.ts';
import { type Doc, type ScopeLine, BLANK_GAP_EM, follows, lineKey } from './scope.ts';
import { parseValue } from './values.ts';

/**
 * Table fields. The header is a line whose cells are column labels (in any order, some
 * columns absent, unknown columns allowed); rows are read below it, each cell given to the
 * header it stands under. A line with text only in text columns continues the row above
 * (a description on two lines). The table ends at a blank gap, a "Total"/"Subtotal" line
 * or any other field's label, or the page's end; it continues on the next page when the
 * header is repeated there. A table not found is null. Two separate tables with the same
 * header would make every row a guess, so they give null as well.
 *
 * A row must fill the column structure: a line with one cell ("--- Non Food ---"), or with
 * no value in any number column, is not a row (a section title, a note), and a line that
 * opens with any other label ("Tax: 0.2%", "Zwischensumme") ends the table.
 */

export type TableRead = { rows: Results[] | null; places: Array<Record<string, Place>>; lines: Set<string> };

/** A cell of a row: its text (joined over continuation lines) and where it stands. */
type RowCell = { text: string; place: Place };

/** The box of a cell on its line. */
export function placeOf(line: Line, cell: Cell): Place {
  return { page: line.page, box: [cell.x0, line.y - line.height, cell.x1, line.y + 0.25 * line.height] };
}

function union(a: Place, b: Place): Place {
  if (a.page !== b.page) return a;
  return {
    page: a.page,
    box: [
      Math.min(a.box[0], b.box[0]),
      Math.min(a.box[1], b.box[1]),
      Math.max(a.box[2], b.box[2]),
      Math.max(a.box[3], b.box[3]),
    ],
  };
}

/** Lines that end a table whatever the definition says. */
const END_WORDS = /^(sub-?total|total|grand total|summe|gesamt|zwischensumme|total ht|total ttc|montant total)\b/i;

type Column = { header: Cell; field: LeafField | null };
type Header = { at: number; columns: Column[]; matched: Set<string> };
type Segment = { page: number; rows: Map<string, RowCell>[]; lines: Set<string>; end: 'stop' | 'gap' | 'page' };

export function readTable(field: TableField, path: FieldPath, doc: Doc): TableRead {
  const headers = findHeaders(field, path, doc);
  const segments: Segment[][] = [];
  for (const [i, header] of headers.entries()) {
    const segment = readRows(header, doc);
    const previous = segments.at(-1);
    const prevLast = previous?.at(-1);
    const headerLine = doc.scope[header.at]?.line;
    const continues =
      prevLast !== undefined &&
      prevLast.end !== 'stop' &&
      headerLine !== undefined &&
      sameColumns(headers[i - 1], header) &&
      prevLast.page === headerLine.page - 1;
    if (continues && previous) previous.push(segment);
    else segments.push([segment]);
  }
  const lines = new Set<string>();
  for (const h of headers) {
    const line = doc.scope[h.at]?.line;
    if (line) lines.add(lineKey(line));
  }
  for (const s of segments.flat()) for (const k of s.lines) lines.add(k);
  const cells = segments.length === 1 && segments[0] ? segments[0].flatMap((s) => s.rows) : [];
  if (cells.length === 0) return { rows: null, places: [], lines };
  const rows = cells.map((row) => rowValues(field, row, doc));
  const places = cells.map((row, i) => {
    const out: Record<string, Place> = {};
    for (const [name, cell] of row)
      if (rows[i]?.[name] !== null && rows[i]?.[name] !== undefined) out[name] = cell.place;
    return out;
  });
  return { rows, places, lines };
}

function sameColumns(a: Header | undefined, b: Header): boolean {
  return a !== undefined && [...a.matched].sort().join() === [...b.matched].sort().join();
}

/** Lines whose bare-label cells name at least two of the table's columns (or its only one). */
function findHeaders(field: TableField, path: FieldPath, doc: Doc): Header[] {
  const headers: Header[] = [];
  const need = Math.min(2, field.columns.length);
  for (const [at, sl] of doc.scope.entries()) {
    const columns: Column[] = [];
    const matched = new Set<string>();
    let twice = false;
    for (const cell of sl.cells) {
      const m = doc.labels.match(cell.text);
      const col =
        m && m.kind === 'clean' && m.rest === '' && m.box === undefined && m.extra === undefined
          ? field.columns.filter((c) => m.owners.has(`${path}[].${c.name}`))
          : [];
      const [only] = col;
      if (col.length === 1 && only) {
        if (matched.has(only.name)) twice = true;
        matched.add(only.name);
        columns.push({ header: cell, field: only });
      } else {
        columns.push({ header: cell, field: null });
      }
    }
    if (!twice && matched.size >= need && matched.size * 2 >= sl.cells.length) headers.push({ at, columns, matched });
  }
  return headers;
}

/** The rows under one header, down to the end of the table or of the page. */
function readRows(header: Header, doc: Doc): Segment {
  const rows: Map<string, RowCell>[] = [];
  const lines = new Set<string>();
  const headerLine = doc.scope[header.at];
  if (!headerLine) return { page: 0, rows, lines, end: 'page' };
  const page = headerLine.line.page;
  let previous = headerLine.line;
  for (let i = header.at + 1; i < doc.scope.length; i++) {
    const sl = doc.scope[i];
    if (!sl) break;
    if (sl.line.page !== headerLine.line.page) return { page, rows, lines, end: 'page' };
    if (sl.cells.length === 0) continue;
    const limit = rows.length === 0 ? 1.5 * BLANK_GAP_EM : BLANK_GAP_EM;
    if (sl.line.y - previous.y > limit * Math.max(previous.height, sl.line.height))
      return { page, rows, lines, end: 'gap' };
    if (endsTable(sl, doc)) return { page, rows, lines, end: 'stop' };
    const placed = place(sl, header);
    const current = rows.at(-1);
    if (current && follows(previous, sl.line) && onlyTextColumns(placed, header)) {
      for (const [name, cell] of placed) {
        const had = current.get(name);
        current.set(name, had ? { text: `${had.text} ${cell.text}`, place: union(had.place, cell.place) } : cell);
      }
    } else if (fillsRow(sl, placed, header, doc)) {
      rows.push(placed);
    } else if (rows.length > 0) {
      // A line that is no row and no continuation (a note, a section title) is skipped, not read.
      previous = sl.line;
      continue;
    }
    lines.add(lineKey(sl.line));
    previous = sl.line;
  }
  return { page, rows, lines, end: 'page' };
}

function endsTable(sl: ScopeLine, doc: Doc): boolean {
  return sl.cells.some((c) => {
    if (END_WORDS.test(c.text)) return true;
    const m = doc.labels.match(c.text);
    if (m === null || m.title) return false;
    // Another field's label, or a label of the vocabulary that names no column ("Tax: 0.2%").
    const other = [...m.owners].some((o) => !o.includes('[]'));
    const column = [...m.owners].some((o) => o.includes('[]'));
    return (
      (m.kind === 'clean' || m.extra !== undefined) &&
      (other || (!column && m.concepts.size > 0 && (m.colon || m.rest !== '' || sl.cells.length <= 2)))
    );
  });
}

/**
 * Whether a line fills the table's column structure: two cells or more under two columns
 * or more, and a value in at least one number column when the table has one.
 */
function fillsRow(sl: ScopeLine, placed: Map<string, RowCell>, header: Header, doc: Doc): boolean {
  const numeric = header.columns.filter((c) => c.field && c.field.type !== 'string');
  if (numeric.length === 0) return placed.size >= Math.min(2, header.matched.size);
  if (sl.cells.length < 2 || placed.size < Math.min(2, header.matched.size)) return false;
  return numeric.some((c) => {
    const cell = c.field ? placed.get(c.field.name) : undefined;
    return c.field !== null && cell !== undefined && parseValue(c.field.type, cell.text, doc.hints) !== null;
  });
}

/** Each cell of a row line under the header it overlaps most, or else whose span holds its middle. */
function place(sl: ScopeLine, header: Header): Map<string, RowCell> {
  const out = new Map<string, RowCell>();
  const cols = header.columns;
  for (const cell of sl.cells) {
    let best: Column | undefined;
    let bestOverlap = 0;
    for (const col of cols) {
      const o = overlap(cell, col.header);
      if (o > bestOverlap) {
        best = col;
        bestOverlap = o;
      }
    }
    if (!best) {
      const mid = (cell.x0 + cell.x1) / 2;
      best = cols.reduce<Column | undefined>((near, col) => {
        const d = Math.abs((col.header.x0 + col.header.x1) / 2 - mid);
        return near === undefined || d < Math.abs((near.header.x0 + near.header.x1) / 2 - mid) ? col : near;
      }, undefined);
    }
    if (!best?.field) continue;
    const name = best.field.name;
    const had = out.get(name);
    const here = placeOf(sl.line, cell);
    out.set(
      name,
      had ? { text: `${had.text} ${cell.text}`, place: union(had.place, here) } : { text: cell.text, place: here },
    );
  }
  return out;
}

function onlyTextColumns(placed: Map<string, RowCell>, header: Header): boolean {
  if (placed.size === 0) return true;
  for (const name of placed.keys()) {
    const col = header.columns.find((c) => c.field?.name === name);
    if (col?.field?.type !== 'string') return false;
  }
  return true;
}

function rowValues(field: TableField, cells: Map<string, RowCell>, doc: Doc): Results {
  const row: Results = {};
  for (const c of field.columns) {
    const text = cells.get(c.name)?.text;
    const value: LeafValue = text === undefined ? null : parseValue(c.type, text, doc.hints);
    row[c.name] = value;
  }
  return row;
}
