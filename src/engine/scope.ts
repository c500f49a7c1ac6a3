import type { Cell, Layout, Line } from './layout.ts';
import type { LabelIndex } from './labels.ts';
import type { FormatHints } from './values.ts';

/**
 * A scope is the part of the document a field is looked for in: the whole document for
 * top-level fields, the block under a heading ("Bill To") for the fields of an object.
 * Each of its lines keeps only the cells that fall inside the scope.
 */
export type ScopeLine = { line: Line; cells: Cell[] };
export type Scope = ScopeLine[];

/**
 * The document as grounding sees it. `tableTotals`: the amount under a table's amount
 * column on the totals line that ended it, by the line's key (tables.ts).
 */
export type Doc = {
  scope: Scope;
  labels: LabelIndex;
  hints: FormatHints;
  objectPaths: ReadonlySet<string>;
  /** Every line of the document, tables' lines included (a scope may leave them out). */
  whole?: Scope;
  tableTotals?: ReadonlyMap<string, Cell>;
};

/** Lines further apart than this many text heights have a blank gap between them. */
export const BLANK_GAP_EM = 2;

export function wholeDocument(layout: Layout): Scope {
  const scope: Scope = [];
  // The line's own cells when none is a rule (most lines): nothing changes a scope's cells.
  for (const p of layout.pages)
    for (const line of p.lines)
      scope.push({ line, cells: hasRule(line.cells) ? line.cells.filter((c) => !isRule(c.text)) : line.cells });
  return scope;
}

function hasRule(cells: readonly Cell[]): boolean {
  for (const c of cells) if (isRule(c.text)) return true;
  return false;
}

/** A drawn rule in a text document ("-----", "=====", "|"): no text, only a line. */
function isRule(text: string): boolean {
  // Most cells open with a letter or a digit: no rule, and no need of the pattern.
  return !isAlnum(text.charCodeAt(0)) && RULE.test(text);
}

function isAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}
const RULE = /^[-=_|+*~.\s]+$/;

/** Whether `b`, the line after `a`, follows it closely: same page and no blank gap between. */
export function follows(a: Line, b: Line): boolean {
  return a.page === b.page && b.y - a.y <= BLANK_GAP_EM * Math.max(a.height, b.height);
}

/** A unique key of a line within a document. */
export function lineKey(line: Line): string {
  return `${line.page}:${line.index}`;
}

/** Each scope's lines by their place in it (the first, where a line stands twice), made once per scope. */
const POSITIONS = new WeakMap<Scope, Map<Line, number>>();

/** Where a line stands in a scope, or -1: the first index holding it. */
export function positionOf(scope: Scope, line: Line): number {
  let positions = POSITIONS.get(scope);
  if (!positions) {
    positions = new Map();
    for (const [i, sl] of scope.entries()) if (!positions.has(sl.line)) positions.set(sl.line, i);
    POSITIONS.set(scope, positions);
  }
  return positions.get(line) ?? -1;
}
