import type { LabelIndex, LabelMatch } from './labels.ts';
import type { FieldPath } from './types.ts';
import type { Doc, Scope } from './scope.ts';
import { dueDatesIn } from './terms.ts';

/**
 * What grounding asks of every cell, asked once per scope instead of once per field: which
 * cells open with a label, and which fields each of those labels names. A field then visits
 * the cells of its own labels (and the few others its concept reads) instead of every cell of
 * every page. Built on first use and kept per scope array (each belongs to one document).
 */

/** A labelled cell: its line's index in the scope, its own on the line, and its label. */
export type LabelledCell = { readonly i: number; readonly j: number; readonly m: LabelMatch };

type Index = {
  labels: LabelIndex;
  /** Every labelled cell, in reading order. */
  labelled: LabelledCell[];
  /** The labelled cells of each field its labels name (a match's owners), in reading order. */
  byPath: Map<FieldPath, LabelledCell[]>;
  /** Lines with three labelled cells or more: where a header of titles may stand (a summary table's). */
  wide: number[];
  /** Cells whose payment terms set a due date, in reading order (built when a due date is asked for). */
  terms?: Array<{ i: number; j: number }>;
};

const INDEXES = new WeakMap<Scope, Index>();

function indexOf(doc: Doc): Index {
  const known = INDEXES.get(doc.scope);
  if (known?.labels === doc.labels) return known;
  const index: Index = { labels: doc.labels, labelled: [], byPath: new Map(), wide: [] };
  for (let i = 0; i < doc.scope.length; i++) {
    const cells = doc.scope[i]?.cells ?? [];
    let count = 0;
    for (let j = 0; j < cells.length; j++) {
      const m = doc.labels.match(cells[j]?.text ?? '');
      if (!m) continue;
      count++;
      const at = { i, j, m };
      index.labelled.push(at);
      for (const path of m.owners) {
        const list = index.byPath.get(path);
        if (list) list.push(at);
        else index.byPath.set(path, [at]);
      }
    }
    if (count >= 3) index.wide.push(i);
  }
  INDEXES.set(doc.scope, index);
  return index;
}

/** Every cell of the scope that opens with a label, in reading order. */
export function labelledCells(doc: Doc): readonly LabelledCell[] {
  return indexOf(doc).labelled;
}

/** The cells of the scope whose label names the field at `path` (`match(text).owners` has it), in reading order. */
export function cellsLabelling(path: FieldPath, doc: Doc): readonly LabelledCell[] {
  return indexOf(doc).byPath.get(path) ?? [];
}

/** Lines (their index in the scope) with three labelled cells or more. */
export function linesOfLabels(doc: Doc): readonly number[] {
  return indexOf(doc).wide;
}

/** The cells whose payment terms set a due date (`dueDatesIn` finds one), in reading order. */
export function cellsWithTerms(doc: Doc): ReadonlyArray<{ i: number; j: number }> {
  const index = indexOf(doc);
  if (!index.terms) {
    index.terms = [];
    for (let i = 0; i < doc.scope.length; i++) {
      const cells = doc.scope[i]?.cells ?? [];
      for (let j = 0; j < cells.length; j++)
        if (dueDatesIn(cells[j]?.text ?? '', doc.hints.dateOrder).length > 0) index.terms.push({ i, j });
    }
  }
  return index.terms;
}

/** Cells by line, in reading order: each line's index in the scope and the indexes of its cells, ascending. */
export type CellsByLine = ReadonlyArray<{ at: number; cells: readonly number[] }>;

/**
 * Cells of several lists (any order, repeats allowed) and lines to visit even without a cell,
 * grouped by line in reading order.
 */
export function byLine(
  lists: ReadonlyArray<ReadonlyArray<{ i: number; j: number }>>,
  lines: readonly number[] = [],
): CellsByLine {
  const [only] = lists;
  if (lists.length === 1 && only && lines.length === 0) return byLineOfOne(only);
  const cells = new Map<number, Set<number>>();
  for (const i of lines) if (!cells.has(i)) cells.set(i, new Set());
  for (const list of lists)
    for (const { i, j } of list) {
      const set = cells.get(i);
      if (set) set.add(j);
      else cells.set(i, new Set([j]));
    }
  return [...cells].sort((a, b) => a[0] - b[0]).map(([at, js]) => ({ at, cells: [...js].sort((a, b) => a - b) }));
}

/**
 * byLine of one list (a field's own labelled cells, most fields' only list): already in reading
 * order, so runs of one line are its groups, without the sets and sorts of several lists.
 * A list out of order goes the general way.
 */
function byLineOfOne(list: ReadonlyArray<{ i: number; j: number }>): CellsByLine {
  const out: Array<{ at: number; cells: number[] }> = [];
  let group: { at: number; cells: number[] } | undefined;
  let lastJ = -1;
  for (const { i, j } of list) {
    if (group && i === group.at) {
      if (j <= lastJ) return byLine([list, []], []);
      group.cells.push(j);
    } else {
      if (group && i < group.at) return byLine([list, []], []);
      group = { at: i, cells: [j] };
      out.push(group);
    }
    lastJ = j;
  }
  return out;
}
