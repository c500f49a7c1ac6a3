import type { LeafField, LeafValue, Results, TableField } from '../contract/index.ts';
import type { Cell } from './layout.ts';
import { overlap } from './layout.ts';
import type { FieldPath } from './labels.ts';
import { type Doc, type Scope, type ScopeLine, BLANK_GAP_EM, follows, lineKey } from './scope.ts';
import { parseValue } from './values.ts';

/**
 * Table fields. The header is a line whose cells are column labels (in any order, some
 * columns absent, unknown columns allowed); rows are read below it, each cell given to the
 * header it stands under. A line with text only in text columns continues the row above
 * (a description on two lines). The table ends at a blank gap, a "Total"/"Subtotal" line
 * or any other field's label, or the page's end; it continues on the next page when the
 * header is repeated there. A table not found is []. Two separate tables with the same
 * header would make every row a guess, so they give [] as well.
 */

export type TableRead = { rows: Results[]; lines: Set<string> };

/** Lines that end a table whatever the definition says. */
const END_WORDS = /^(sub-?total|total|grand total|summe|gesamt|zwischensumme|total ht|total ttc|montant total)\b/i;

type Column = { header: Cell; field: LeafField | null };
type Header = { at: number; columns: Column[]; matched: Set<string> };
type Segment = { page: number; rows: Map<string, string>[]; lines: Set<string>; end: 'stop' | 'gap' | 'page' };

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
  if (segments.length !== 1 || !segments[0]) return { rows: [], lines };
  const rows = segments[0].flatMap((s) => s.rows).map((cells) => rowValues(field, cells, doc));
  return { rows, lines };
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
        m && m.kind === 'clean' && m.rest === '' && m.box === undefined
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
  const rows: Map<string, string>[] = [];
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
    if (sl.line.y - previous.y > limit * Math.max(previous.height, sl.line.height)) return { page, rows, lines, end: 'gap' };
    if (endsTable(sl, doc)) return { page, rows, lines, end: 'stop' };
    const placed = place(sl, header);
    const current = rows.at(-1);
    if (current && follows(previous, sl.line) && onlyTextColumns(placed, header)) {
      for (const [name, text] of placed) current.set(name, current.has(name) ? `${current.get(name)} ${text}` : text);
    } else {
      rows.push(placed);
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
    return m !== null && m.kind === 'clean' && [...m.owners].some((o) => !o.includes('[]'));
  });
}

/** Each cell of a row line under the header it overlaps most, or else whose span holds its middle. */
function place(sl: ScopeLine, header: Header): Map<string, string> {
  const out = new Map<string, string>();
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
    out.set(name, out.has(name) ? `${out.get(name)} ${cell.text}` : cell.text);
  }
  return out;
}

function onlyTextColumns(placed: Map<string, string>, header: Header): boolean {
  if (placed.size === 0) return true;
  for (const name of placed.keys()) {
    const col = header.columns.find((c) => c.field?.name === name);
    if (col?.field?.type !== 'string') return false;
  }
  return true;
}

function rowValues(field: TableField, cells: Map<string, string>, doc: Doc): Results {
  const row: Results = {};
  for (const c of field.columns) {
    const text = cells.get(c.name);
    const value: LeafValue = text === undefined ? null : parseValue(c.type, text, doc.hints);
    row[c.name] = value;
  }
  return row;
}
