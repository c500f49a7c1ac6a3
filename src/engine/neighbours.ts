import type { LeafField } from '../contract/index.ts';
import { parseDate } from './dates.ts';
import { readIdentifier } from './identifiers.ts';
import { isMoneyMark } from './values.ts';
import { type Cell, type Line, linePitch, overlap } from './layout.ts';
import { isCountryCode } from './party-lines.ts';
import { type Doc, type Scope, type ScopeLine, follows, positionOf } from './scope.ts';

/**
 * Where a label's value stands: the cell right of it on its line, or the cell under it in
 * its column, and the checks that tell a value from the next key (a column of keys, a row
 * of labels over their values).
 */

/**
 * The cell right of a label, when it is not itself labelled; a lone ":" between them is
 * skipped, and for an amount a cell that only names its currency.
 */
export function rightOf(sl: ScopeLine, j: number, doc: Doc, amount = false): Cell | undefined {
  let k = j + 1;
  let cell = sl.cells[k];
  if (cell?.text.trim() === ':') cell = sl.cells[++k];
  // "TOTAL │ RM │ 14.10", "Steuerbetrag in │ EUR │ 56,87": the currency an amount is in stands between.
  if (amount && cell && sl.cells[k + 1] && isMoneyMark(cell.text)) cell = sl.cells[++k];
  if (!cell) return undefined;
  const text = cell.text.replace(/^:\s*/, '');
  if (text === '' || doc.labels.isLabelled(text)) return undefined;
  return text === cell.text ? cell : { ...cell, text };
}

/**
 * A label in a column of keys, each with its value beside it ("Date de facture │ 13/11/2017",
 * "Votre référence │ PO445", "Réf. marché │ MSPE2017", "N° TVA client │ FR…"): the lines
 * around it, without a blank gap, open with a cell at the label's left edge and hold a cell
 * at its value's, and another key of the column is a label of the vocabulary. Then the cell
 * below the label is the next key, not this label's value.
 */
export function inKeyColumn(scope: Scope, at: number, label: Cell, value: Cell, doc: Doc): boolean {
  const here = scope[at];
  if (!here) return false;
  const tolerance = here.line.height;
  const pairOf = (sl: ScopeLine): Cell | undefined => {
    const [key, val] = sl.cells;
    if (!key || !val || Math.abs(key.x0 - label.x0) > tolerance) return undefined;
    return Math.abs(val.x0 - value.x0) <= tolerance ? key : undefined;
  };
  let labelled = 0;
  for (const step of [-1, 1]) {
    let previous = here.line;
    for (let k = at + step; k >= 0 && k < scope.length; k += step) {
      const next = scope[k];
      if (!next || next.cells.length === 0) continue;
      if (!(step > 0 ? follows(previous, next.line) : follows(next.line, previous))) break;
      const key = pairOf(next);
      if (!key) break;
      if (doc.labels.isLabelled(key.text)) labelled++;
      previous = next.line;
    }
  }
  return labelled > 0;
}

/**
 * The next line under a line's cells without a blank gap. Lines between whose cells all
 * stand beside them (another column's text: "Tout retard de paiement …" left of "TOTAL HT │
 * TOTAL TVA" over their amounts) are passed, their text bridging the gap.
 */
export function lineBelow(scope: Scope, lineAt: number): ScopeLine | undefined {
  const here = scope[lineAt];
  if (!here) return undefined;
  let previous = here.line;
  for (let k = lineAt + 1; k < scope.length; k++) {
    const sl = scope[k];
    if (!sl || sl.cells.length === 0) continue;
    if (!follows(previous, sl.line)) return undefined;
    if (sl.cells.some((c) => here.cells.some((h) => overlap(c, h) > 0))) return sl;
    previous = sl.line;
  }
  return undefined;
}

/**
 * The one cell directly below a label, in its column, on the next line under it without a blank
 * gap. A labelled cell there is no value ("Invoice Number" over "Invoice Date").
 */
export function cellBelow(scope: Scope, lineAt: number, cellAt: number, doc: Doc): Cell | undefined {
  const here = scope[lineAt];
  const label = here?.cells[cellAt];
  const next = lineBelow(scope, lineAt);
  if (!here || !label || !next) return undefined;
  const under = next.cells.filter((c) => overlap(c, label) > 0);
  const [cell] = under;
  if (under.length !== 1 || !cell) return undefined;
  // The cell must sit under this label more than under any other cell of the label's line.
  const mine = overlap(cell, label);
  if (here.cells.some((other, k) => k !== cellAt && overlap(cell, other) >= mine)) return undefined;
  return doc.labels.isLabelled(cell.text) ? undefined : cell;
}

/**
 * The one date under a column's title ("Beschreibung │ Fälligkeit" over its terms), row by
 * row without a blank gap, leaving out the rows `skip` refuses by their text ("Zahlbar mit 2%
 * Skonto bis │ 14.11.2018": a discount's deadline). Two different dates left: none.
 */
export function soleDateBelow(
  scope: Scope,
  lineAt: number,
  cellAt: number,
  doc: Doc,
  skip: (rowText: string) => boolean,
): { cell: Cell; line: Line; date: string } | undefined {
  const here = scope[lineAt];
  const label = here?.cells[cellAt];
  if (!here || !label) return undefined;
  let found: { cell: Cell; line: Line; date: string } | undefined;
  let previous = here.line;
  for (let k = lineAt + 1; k < scope.length; k++) {
    const sl = scope[k];
    if (!sl || sl.cells.length === 0) continue;
    if (!follows(previous, sl.line)) break;
    previous = sl.line;
    const under = sl.cells.filter((c) => overlap(c, label) > 0);
    if (under.length === 0 || skip(sl.cells.map((c) => c.text).join(' '))) continue;
    for (const cell of under) {
      const date = parseDate(cell.text, doc.hints.dateOrder);
      if (date === null) continue;
      if (found && found.date !== date) return undefined;
      found ??= { cell, line: sl.line, date };
    }
  }
  return found;
}

/**
 * "Rechnung Nr. 471102" over "vom 05.03.2018": a heading wrapped before its date clause. The
 * line right under it, starting where the label's cell starts, is the clause and nothing else.
 */
export function dateUnder(rest: string, scope: Scope, at: number, label: Cell): string | null {
  const here = scope[at];
  const next = nextLineWithText(scope, at);
  const [first] = next?.cells ?? [];
  if (!here || !next || !first || next.cells.length !== 1 || !follows(here.line, next.line)) return null;
  if (Math.abs(first.x0 - label.x0) > here.line.height) return null;
  const alone = readIdentifier(rest);
  const joined = readIdentifier(`${rest} ${first.text}`);
  return alone.id !== null && joined.id === alone.id ? joined.date : null;
}

/** A bare label of a field outside tables ("Invoice Date" in a row of labels above their values). */
function keyLabel(text: string, doc: Doc): boolean {
  const m = doc.labels.match(text);
  return m !== null && m.kind === 'clean' && m.extra === undefined && [...m.owners].some((o) => !o.includes('[]'));
}

function nextLineWithText(scope: Scope, at: number): ScopeLine | undefined {
  for (let i = at + 1; i < scope.length; i++) {
    const sl = scope[i];
    if (sl && sl.cells.length > 0) return sl;
  }
  return undefined;
}

/** Each scope's line pitch by page, made once per scope and page. */
const PITCHES = new WeakMap<Scope, Map<number, number>>();

function pitchOf(scope: Scope, page: number): number {
  let pitches = PITCHES.get(scope);
  if (!pitches) {
    pitches = new Map();
    PITCHES.set(scope, pitches);
  }
  let pitch = pitches.get(page);
  if (pitch === undefined) {
    pitch = linePitch(scope.filter((w) => w.line.page === page).map((w) => w.line));
    pitches.set(page, pitch);
  }
  return pitch;
}

/**
 * A text value that wraps onto the lines just above or below it, closer than the page's
 * line pitch, with its label centred beside them ("MVM Musterhafter" / "Name: │ Versicherungsverein
 * Musterstadt a.G."): all of its lines. Other types and identifiers are one line.
 */
export function wrapped(field: LeafField, sl: ScopeLine, value: Cell, label: Cell, doc: Doc): string {
  if (field.type !== 'string') return value.text;
  const scope = doc.whole ?? doc.scope;
  const at = positionOf(scope, sl.line);
  if (at < 0) return value.text;
  const pitch = pitchOf(scope, sl.line.page);
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

/**
 * A label stands in a table's header row when its row has three cells or more and another
 * of them is text that is no key of the definition: a column title ("Montant"), or the
 * label of a table's column ("Price"). A header whose titles wrap onto several lines
 * ("Price w/o" over "Tax") is one row: lines closer than their text's height belong to it.
 */
export function inHeaderRow(sl: ScopeLine, j: number, doc: Doc): boolean {
  const scope = doc.whole ?? doc.scope;
  const at = positionOf(scope, sl.line);
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
