import type { LeafField, LeafValue, TableField } from '../contract/index.ts';
import type { Cell, Line } from './layout.ts';
import { overlap } from './layout.ts';
import { columnConceptOf } from './label-forms.ts';
import { type Doc, type ScopeLine, BLANK_GAP_EM, lineKey } from './scope.ts';
import { isSumLabel } from './table-checks.ts';
import type { Column, Header } from './table-header.ts';
import type { Place } from './types.ts';
import { type FormatHints, looksLikeAmount, parseValue } from './values.ts';
import { anyOf } from './vocabulary/role-words.ts';

/**
 * The rows under a table's header (tables.ts reads the table from them). A row may take
 * several lines: a description that wraps, an amount printed on the row's second line; a
 * line that follows a row closely and only adds text, or fills the row's empty columns,
 * belongs to it. The rows end at the table's totals (a "Total"/"Summe" line, any other
 * field's label, or an amount that is the sum of the rows above), at text after a blank
 * gap that is no row, or at the page's end; a carried-forward line at a page break is no item.
 */

/** A cell of a row: its text (joined over continuation lines) and where it stands. */
export type RowCell = { text: string; place: Place };
/**
 * `rates`: percentages printed under columns that name no field (a discount, a tax rate);
 * `amounts`: amounts printed there ("Price w/o Tax": a net amount the definition does not ask for).
 */
export type Row = {
  cells: Map<string, RowCell>;
  last: Line;
  amountChanged: boolean;
  rates: number[];
  amounts: number[];
};
export type Segment = {
  page: number;
  rows: Row[];
  lines: Set<string>;
  end: 'stop' | 'gap' | 'page';
  /** The line the rows ended at (the first after them). */
  at: number;
  /** A number stood under no column title, or rows followed the table's end. */
  ambiguous: boolean;
  /** The amount cell of the totals line that ended it. */
  total?: { line: string; cell: Cell };
  /** Fields a net and a gross column both answer (table-header.ts). */
  twofold: ReadonlySet<string>;
};

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
const END_WORDS = new RegExp(`^${anyOf('tableEndPatterns')}\\b`, 'i');
/** A line that carries the running sum over a page break: no item, and the table goes on. */
export const CARRY_WORDS = new RegExp(`^${anyOf('carryPatterns')}`, 'i');
/** The first row may stand this many text heights under its header (a rule and padding between). */
const FIRST_ROW_EM = 4;
/** A line that follows the row above this closely (in text heights) continues it. */
const CONTINUE_EM = 1.6;
/** "10%", "2,00 %": a rate printed in a column of its own. */
const PERCENT = /^(-?\d+(?:[.,]\d+)?)\s*%$/u;
/** "20 Stk", "2,5 Std.", "25 Liter(s)": a quantity and its unit. */
const QUANTITY_WITH_UNIT = /^([-+]?\d[\d.,'\s]*?)\s*\p{L}[\p{L}.()²³/]*$/u;

/** The rows under one header, down to the end of the table or of the page. */
/**
 * `from`: where the rows go on after a page break with no header repeated (table-pages.ts),
 * the first of them; else they start under the header.
 */
export function readRows(field: TableField, header: Header, doc: Doc, from?: number): Segment {
  const first = from === undefined ? (doc.scope[header.last] ?? doc.scope[header.at]) : doc.scope[from];
  const segment: Segment = {
    page: first?.line.page ?? 0,
    rows: [],
    lines: new Set(),
    end: 'page',
    at: doc.scope.length,
    ambiguous: false,
    twofold: header.twofold,
  };
  if (!first) return segment;
  const { rows, lines } = segment;
  let previous = first.line;
  const finish = (end: Segment['end'], at: number): Segment => {
    segment.end = end;
    segment.at = at;
    if (end === 'gap' && rowsFollow(field, header, doc, at)) segment.ambiguous = true;
    return segment;
  };
  for (let i = from ?? header.last + 1; i < doc.scope.length; i++) {
    const sl = doc.scope[i];
    if (!sl) break;
    if (sl.line.page !== segment.page) return finish('page', i);
    if (sl.cells.length === 0) continue;
    const gap = sl.line.y - previous.y;
    const height = Math.max(previous.height, sl.line.height);
    const blank = gap > BLANK_GAP_EM * height;
    if (rows.length === 0 && gap > FIRST_ROW_EM * height) return finish('gap', i);
    if (sl.cells.some((c) => CARRY_WORDS.test(c.text))) {
      lines.add(lineKey(sl.line));
      previous = sl.line;
      continue;
    }
    const { cells: placed, unaligned, rates, amounts } = place(sl, header, doc.hints);
    // A line that opens with "Total" or "Summe" but prints a quantity and a unit price is an
    // item (a group's subtotal billed as a line): a totals line prints no unit price.
    if (endsTable(sl, doc) && !pricedRow(placed, header, doc)) {
      const amount = totalCell(sl, header);
      if (amount) segment.total = { line: lineKey(sl.line), cell: amount };
      // Not the end, and which rows are the items is a guess: after a totals line, an item priced
      // like the others before the next label (a group's subtotal, "Subtotal hardware", then the
      // next group); after another field's label among an item's notes ("Name: …" of a delivery
      // address), rows past any label.
      const after = totalsLine(sl, doc) ? 'priced' : 'past-labels';
      if (rowsFollow(field, header, doc, i + 1, after)) segment.ambiguous = true;
      return finish('stop', i);
    }
    if (rows.length >= 2 && isSumOfRows(placed, rows, doc)) return finish('stop', i);
    const current = rows.at(-1);
    if (current && !blank && continues(current, placed, sl.line, header)) {
      for (const [name, cell] of placed) {
        const had = current.cells.get(name);
        current.cells.set(name, had ? { text: `${had.text} ${cell.text}`, place: union(had.place, cell.place) } : cell);
      }
      current.last = sl.line;
      current.rates.push(...rates);
      current.amounts.push(...amounts);
    } else if (fillsRow(placed, header, doc)) {
      if (unaligned) segment.ambiguous = true;
      rows.push({ cells: placed, last: sl.line, amountChanged: false, rates, amounts });
    } else if (undescribedRow(placed, header, doc)) {
      // A row whose description stands on another line: which lines make which item is a guess.
      segment.ambiguous = true;
    } else if (current && changesAmount(placed, header, doc)) {
      current.amountChanged = true;
    } else {
      // After a blank gap, text that is no row is past the table, unless only notes of the
      // item above ("Verpackung: Flasche") stand between it and the next row; before it, a
      // note or a section title.
      if (blank && rows.length > 0 && !notesBeforeRow(header, doc, i)) return finish('gap', i);
      // A sentence across the number columns before any row belongs to no item above it: it may be
      // a line item of text only (EN 16931 allows them) or a note on the table; the count would be a guess.
      if (rows.length === 0 && crossesNumberColumns(sl, header)) segment.ambiguous = true;
      previous = sl.line;
      continue;
    }
    lines.add(lineKey(sl.line));
    previous = sl.line;
  }
  return segment;
}

/** A cell of words that runs across a whole number column: text no column title names. */
function crossesNumberColumns(sl: ScopeLine, header: Header): boolean {
  const numbers = header.columns.filter((c) => c.field !== null && c.field.type !== 'string');
  return sl.cells.some(
    (cell) => /\p{L}{2}/u.test(cell.text) && numbers.some((c) => cell.x0 <= c.x0 && cell.x1 >= c.x1),
  );
}

/**
 * Whether a row of this table stands further down the page, before any totals: the end was
 * not the end. `past-labels`: lines with other fields' labels are passed over, only totals end
 * the search; `priced`: only a row that prints its quantity and unit price under their columns counts.
 */
function rowsFollow(
  field: TableField,
  header: Header,
  doc: Doc,
  from: number,
  mode: 'rows' | 'past-labels' | 'priced' = 'rows',
): boolean {
  const page = doc.scope[from]?.line.page;
  for (let i = from; i < doc.scope.length; i++) {
    const sl = doc.scope[i];
    if (!sl || sl.line.page !== page) return false;
    if (sl.cells.length === 0 || sl.cells.some((c) => CARRY_WORDS.test(c.text))) continue;
    if (endsTable(sl, doc)) {
      if (mode === 'past-labels' && !totalsLine(sl, doc)) continue;
      return false;
    }
    const { cells, unaligned } = place(sl, header, doc.hints);
    if (mode === 'priced' && (unaligned || !pricedRow(cells, header, doc))) continue;
    if (fillsRow(cells, header, doc) && field.columns.length > 0) return true;
  }
  return false;
}

/** Whether lines of text in the text columns only, then a row, follow: an item's notes set apart. */
function notesBeforeRow(header: Header, doc: Doc, from: number): boolean {
  const page = doc.scope[from]?.line.page;
  const texts = new Set(textColumns(header).map((f) => f.name));
  for (let i = from; i < doc.scope.length; i++) {
    const sl = doc.scope[i];
    if (!sl || sl.line.page !== page || endsTable(sl, doc)) return false;
    if (sl.cells.length === 0) continue;
    const { cells, unaligned } = place(sl, header, doc.hints);
    if (i > from && fillsRow(cells, header, doc)) return !unaligned;
    if (unaligned || [...cells.keys()].some((name) => !texts.has(name))) return false;
  }
  return false;
}

/** A line that prints the items' sum or a total: "Summe", "Total HT", "Positionssumme". */
function totalsLine(sl: ScopeLine, doc: Doc): boolean {
  return sl.cells.some((c) => END_WORDS.test(c.text) || isSumLabel(c.text, doc));
}

export function endsTable(sl: ScopeLine, doc: Doc): boolean {
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

/** The one cell of a totals line under the table's amount column. */
function totalCell(sl: ScopeLine, header: Header): Cell | undefined {
  const column = header.columns.find((c) => c.field !== null && isLineAmount(c.field));
  if (!column) return undefined;
  const under = sl.cells.filter((c) => overlap(c, column) > 0);
  return under.length === 1 ? under[0] : undefined;
}

export function numberColumns(header: Header): LeafField[] {
  return header.columns.flatMap((c) => (c.field && c.field.type !== 'string' ? [c.field] : []));
}

function textColumns(header: Header): LeafField[] {
  return header.columns.flatMap((c) => (c.field?.type === 'string' ? [c.field] : []));
}

/**
 * Whether a line opens a row: its description when the table has a description column
 * (else two number columns filled), and a value in a number column.
 */
export function fillsRow(placed: Map<string, RowCell>, header: Header, doc: Doc): boolean {
  const numbers = numberColumns(header).filter((f) => cellValue(f, placed.get(f.name)?.text, doc) !== null);
  const texts = textColumns(header);
  if (texts.length === 0) return numbers.length >= Math.min(2, numberColumns(header).length);
  const described = texts.some((f) => {
    const text = placed.get(f.name)?.text;
    return text !== undefined && /\p{L}/u.test(text);
  });
  // A price alone, where the table has a quantity or an amount column, is a note on the item
  // above ("Abschlag │ -100,00", "Bruttopreis 9,90"), not an item.
  const priceOnly =
    numbers.every((f) => columnConceptOf(f) === 'unit_price') &&
    numberColumns(header).some((f) => columnConceptOf(f) === 'quantity' || isLineAmount(f));
  return described && ((numbers.length > 0 && !priceOnly) || numberColumns(header).length === 0);
}

/** Values in both the quantity and the unit price column: what an item prints and a totals line never does. */
function pricedRow(placed: Map<string, RowCell>, header: Header, doc: Doc): boolean {
  const filled = numberColumns(header).filter((f) => cellValue(f, placed.get(f.name)?.text, doc) !== null);
  const concepts = new Set(filled.map((f) => columnConceptOf(f)));
  return concepts.has('quantity') && concepts.has('unit_price');
}

/** Values in two number columns or more and no description, in a table that has one. */
function undescribedRow(placed: Map<string, RowCell>, header: Header, doc: Doc): boolean {
  if (textColumns(header).length === 0) return false;
  return numberColumns(header).filter((f) => cellValue(f, placed.get(f.name)?.text, doc) !== null).length >= 2;
}

/** A line right under a row that only adds text to it or fills its empty number columns. */
function continues(row: Row, placed: Map<string, RowCell>, line: Line, header: Header): boolean {
  if (placed.size === 0) return false;
  if (line.y - row.last.y > CONTINUE_EM * Math.max(line.height, row.last.height)) return false;
  for (const name of placed.keys()) {
    const col = header.columns.find((c) => c.field?.name === name);
    if (col?.field?.type !== 'string' && row.cells.has(name)) return false;
  }
  return true;
}

/** A line under a row with a value in the amount column of its own (a discount, a surcharge). */
function changesAmount(placed: Map<string, RowCell>, header: Header, doc: Doc): boolean {
  return numberColumns(header).some((f) => isLineAmount(f) && cellValue(f, placed.get(f.name)?.text, doc) !== null);
}

/** A line of amounts only, one of them the sum of the rows' amounts in its column: the table's total. */
function isSumOfRows(placed: Map<string, RowCell>, rows: Row[], doc: Doc): boolean {
  if ([...placed.values()].some((c) => /\p{L}/u.test(c.text))) return false;
  for (const [name, cell] of placed) {
    const value = parseValue('decimal', cell.text, doc.hints);
    if (typeof value !== 'number') continue;
    let sum = 0;
    for (const row of rows) {
      const v = parseValue('decimal', row.cells.get(name)?.text ?? '', doc.hints);
      sum += typeof v === 'number' ? v : Number.NaN;
    }
    if (Math.abs(sum - value) < 0.005) return true;
  }
  return false;
}

export function isLineAmount(f: LeafField): boolean {
  return columnConceptOf(f) === 'line_amount';
}

/** A cell's value as its column's type; a quantity may carry its unit ("20 Stk"). */
export function cellValue(f: LeafField, text: string | undefined, doc: Doc): LeafValue {
  if (text === undefined) return null;
  const value = parseValue(f.type, text, doc.hints);
  if (value !== null || columnConceptOf(f) !== 'quantity') return value;
  const number = QUANTITY_WITH_UNIT.exec(text.trim())?.[1];
  return number === undefined ? null : parseValue(f.type, number, doc.hints);
}

/**
 * Each cell of a line under the column title it overlaps most. A text cell that overlaps
 * none goes to the nearest; a number that overlaps none makes the line unaligned, since
 * which column it belongs to is a guess.
 */
export function place(
  sl: ScopeLine,
  header: Header,
  hints: FormatHints,
): { cells: Map<string, RowCell>; unaligned: boolean; rates: number[]; amounts: number[] } {
  const out = new Map<string, RowCell>();
  const rates: number[] = [];
  const amounts: number[] = [];
  let unaligned = false;
  const cols = header.columns;
  for (const cell of sl.cells) {
    let best: Column | undefined;
    let bestOverlap = 0;
    for (const col of cols) {
      const o = overlap(cell, col);
      if (o > bestOverlap) {
        best = col;
        bestOverlap = o;
      }
    }
    if (!best) {
      if (/^[-+(]?[\d.,'\s%€$£]*\d[\d.,'\s%€$£)]*$/u.test(cell.text)) unaligned = true;
      const mid = (cell.x0 + cell.x1) / 2;
      best = cols.reduce<Column | undefined>((near, col) => {
        const d = Math.abs((col.x0 + col.x1) / 2 - mid);
        return near === undefined || d < Math.abs((near.x0 + near.x1) / 2 - mid) ? col : near;
      }, undefined);
    }
    if (!best?.field) {
      const rate = PERCENT.exec(cell.text)?.[1];
      const value = rate === undefined ? null : parseValue('decimal', rate, hints);
      if (typeof value === 'number') rates.push(value);
      else if (looksLikeAmount(cell.text)) {
        const amount = parseValue('decimal', cell.text, hints);
        if (typeof amount === 'number') amounts.push(amount);
      }
      continue;
    }
    const name = best.field.name;
    const had = out.get(name);
    const here = placeOf(sl.line, cell);
    out.set(
      name,
      had ? { text: `${had.text} ${cell.text}`, place: union(had.place, here) } : { text: cell.text, place: here },
    );
  }
  return { cells: out, unaligned, rates, amounts };
}
