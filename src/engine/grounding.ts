import type { FieldDefinition, LeafField, LeafValue, ObjectField, Results } from '../contract/index.ts';
import { overlap } from './layout.ts';
import type { FieldPath } from './labels.ts';
import { type Doc, type Scope, type ScopeLine, BLANK_GAP_EM, follows, lineKey } from './scope.ts';
import { readTable } from './tables.ts';
import { looksLikeAmount, parseValue } from './values.ts';

/**
 * Grounding: a field gets a value only when a label of that field stands before it on the
 * same line, or directly above it in the same column, and the value parses as the field's
 * type. Everything else is null. Where the document offers two different values for one
 * field, or a labelled value that does not parse, the answer is null too: the engine
 * never picks one.
 */

/** A value seen for a field: strong when the label announces it, weak when only found below. */
type Candidate = { text: string; strong: boolean };

export function groundDefinition(fields: FieldDefinition, doc: Doc): Results {
  const tables = new Map<FieldPath, Results[]>();
  const tableLines = new Set<string>();
  collectTables(fields, '', doc, tables, tableLines);
  const scope = doc.scope.filter((sl) => !tableLines.has(lineKey(sl.line)));
  return groundFields(fields, '', { ...doc, scope }, tables);
}

function collectTables(fields: FieldDefinition, prefix: string, doc: Doc, out: Map<FieldPath, Results[]>, lines: Set<string>): void {
  for (const f of fields) {
    const path = prefix + f.name;
    if (f.type === 'table') {
      const read = readTable(f, path, doc);
      out.set(path, read.rows);
      for (const k of read.lines) lines.add(k);
    } else if (f.type === 'object') {
      collectTables(f.fields, `${path}.`, doc, out, lines);
    }
  }
}

function groundFields(fields: FieldDefinition, prefix: string, doc: Doc, tables: Map<FieldPath, Results[]>): Results {
  const out: Results = {};
  for (const f of fields) {
    const path = prefix + f.name;
    if (f.type === 'table') out[f.name] = tables.get(path) ?? [];
    else if (f.type === 'object') out[f.name] = groundFields(f.fields, `${path}.`, { ...doc, scope: blockOf(f, path, doc) }, tables);
    else out[f.name] = groundLeaf(f, path, doc);
  }
  return out;
}

function groundLeaf(field: LeafField, path: FieldPath, doc: Doc): LeafValue {
  const values = new Set<string>();
  let found: LeafValue = null;
  for (const c of candidates(field, path, doc)) {
    const value = parseValue(field.type, c.text, doc.hints);
    if (value === null) {
      if (c.strong) return null; // a labelled value that is not of the field's type
      continue;
    }
    values.add(JSON.stringify(value));
    found = value;
  }
  return values.size === 1 ? found : null;
}

function candidates(field: LeafField, path: FieldPath, doc: Doc): Candidate[] {
  const out: Candidate[] = [];
  for (const [i, sl] of doc.scope.entries()) {
    for (const [j, cell] of sl.cells.entries()) {
      const m = doc.labels.match(cell.text);
      if (!m || !m.owners.has(path)) continue;
      if (m.box !== undefined) {
        if (field.type === 'boolean') out.push({ text: m.box, strong: true });
        continue;
      }
      if (m.rest !== '') {
        if (m.kind === 'clean') out.push({ text: m.rest, strong: true });
        else if (looseValueFits(field, m.rest, doc)) out.push({ text: m.rest, strong: true });
        continue;
      }
      const right = sl.cells[j + 1];
      const rightValue = right !== undefined && !doc.labels.isLabelled(right.text) ? right.text : undefined;
      const below = m.colon && rightValue !== undefined ? undefined : cellBelow(doc.scope, i, j, doc);
      if (rightValue !== undefined && below === undefined) out.push({ text: rightValue, strong: true });
      else if (below !== undefined && rightValue === undefined) out.push({ text: below, strong: false });
      else if (below !== undefined && rightValue !== undefined) {
        // "Total   10.00" above "Terms: Net 30": only one of the two is a value of the type.
        // "Invoice Number   INV-1" above "Reference   R-7": both are; the field is null.
        const rightParses = parseValue(field.type, rightValue, doc.hints) !== null;
        const belowParses = parseValue(field.type, below, doc.hints) !== null;
        if (rightParses && !belowParses) out.push({ text: rightValue, strong: true });
        else if (belowParses && !rightParses) out.push({ text: below, strong: false });
        else out.push({ text: '', strong: true });
      }
    }
  }
  return out;
}

/** "Total 12.50" is a label and its value; "Net 30" (payment terms) and "Total items: 3" are not. */
function looseValueFits(field: LeafField, rest: string, doc: Doc): boolean {
  if (field.type === 'string' || field.type === 'boolean') return false;
  if (parseValue(field.type, rest, doc.hints) === null) return false;
  return field.type === 'decimal' ? looksLikeAmount(rest) : true;
}

/**
 * The one cell directly below a label, in its column, on the next line without a blank
 * gap. A labelled cell there is no value ("Invoice Number" over "Invoice Date").
 */
function cellBelow(scope: Scope, lineAt: number, cellAt: number, doc: Doc): string | undefined {
  const here = scope[lineAt];
  const label = here?.cells[cellAt];
  const next = nextLineWithText(scope, lineAt);
  if (!here || !label || !next || !follows(here.line, next.line)) return undefined;
  const under = next.cells.filter((c) => overlap(c, label) > 0);
  const [cell] = under;
  if (under.length !== 1 || !cell) return undefined;
  // The cell must sit under this label more than under any other cell of the label's line.
  const mine = overlap(cell, label);
  if (here.cells.some((other, k) => k !== cellAt && overlap(cell, other) >= mine)) return undefined;
  return doc.labels.isLabelled(cell.text) ? undefined : cell.text;
}

function nextLineWithText(scope: Scope, at: number): ScopeLine | undefined {
  for (let i = at + 1; i < scope.length; i++) {
    const sl = scope[i];
    if (sl && sl.cells.length > 0) return sl;
  }
  return undefined;
}

/**
 * The block under each heading of an object ("Bill To"): the lines below it, down to a
 * blank gap or another object's heading, keeping only the cells from the heading's left
 * edge to the next cell on the heading's line (so two blocks side by side stay apart).
 * Several headings give one scope of all their blocks.
 */
function blockOf(field: ObjectField, path: FieldPath, doc: Doc): Scope {
  const block: Scope = [];
  for (const [i, sl] of doc.scope.entries()) {
    for (const [j, cell] of sl.cells.entries()) {
      if (!isHeading(cell.text, path, doc)) continue;
      const tolerance = sl.line.height;
      const left = cell.x0 - tolerance;
      const right = sl.cells[j + 1]?.x0 ?? Infinity;
      let previous = sl.line;
      for (let k = i + 1; k < doc.scope.length; k++) {
        const next = doc.scope[k];
        if (!next) break;
        const cells = next.cells.filter((c) => c.x0 >= left && c.x0 < right);
        if (cells.length === 0) continue;
        if (next.line.page !== previous.page) break;
        if (next.line.y - previous.y > BLANK_GAP_EM * Math.max(previous.height, next.line.height)) break;
        if (cells.some((c) => isAnyHeading(c.text, doc))) break;
        block.push({ line: next.line, cells });
        previous = next.line;
      }
    }
  }
  return block;
}

function isHeading(text: string, path: FieldPath, doc: Doc): boolean {
  const m = doc.labels.match(text);
  return m !== null && m.kind === 'clean' && m.rest === '' && m.box === undefined && m.owners.has(path);
}

function isAnyHeading(text: string, doc: Doc): boolean {
  const m = doc.labels.match(text);
  return m !== null && m.kind === 'clean' && m.rest === '' && [...m.owners].some((o) => doc.objectPaths.has(o));
}
