/**
 * The page as the engine reads it: text placed by position, not by the order in which a
 * PDF happens to draw it. Pieces of text on one baseline form a line; pieces of a line that
 * stand apart form cells, which is how columns and "label   value" pairs are seen.
 */

/** A piece of text where the page shows it. x and y grow right and down; y is the baseline. */
export type TextPiece = { text: string; x: number; y: number; width: number; height: number };

export type Cell = { text: string; x0: number; x1: number };
export type Line = { page: number; index: number; y: number; height: number; cells: Cell[] };
export type Page = { number: number; lines: Line[] };
export type Layout = { pages: Page[] };

/** Pieces closer than this many text heights belong to one cell. */
const CELL_GAP_EM = 0.75;
/** Baselines closer than this many text heights are one line. */
const SAME_LINE_EM = 0.4;

/** Lines and cells of one page from its positioned pieces of text. */
export function layoutPage(pageNumber: number, pieces: readonly TextPiece[]): Page {
  const sorted = pieces.filter((p) => p.text.trim() !== '').sort((a, b) => a.y - b.y || a.x - b.x);
  const groups: TextPiece[][] = [];
  for (const piece of sorted) {
    const group = groups.at(-1);
    const first = group?.[0];
    if (group && first && Math.abs(piece.y - first.y) <= SAME_LINE_EM * Math.max(first.height, piece.height, 1)) {
      group.push(piece);
    } else {
      groups.push([piece]);
    }
  }
  const lines = groups.map((group, index): Line => {
    const ordered = group.sort((a, b) => a.x - b.x || a.y - b.y);
    let height = -Infinity;
    let sum = 0;
    for (const p of ordered) {
      height = Math.max(height, p.height);
      sum += p.y;
    }
    return { page: pageNumber, index, y: sum / ordered.length, height, cells: cellsOf(ordered, height) };
  });
  return { number: pageNumber, lines };
}

const SPACES = /\s+/g;

function cellsOf(ordered: readonly TextPiece[], height: number): Cell[] {
  const cells: Cell[] = [];
  let last: Cell | undefined;
  for (let k = 0; k < ordered.length; k++) {
    const piece = ordered[k] as TextPiece;
    const gap = last ? piece.x - last.x1 : Infinity;
    if (last && gap < CELL_GAP_EM * height) {
      const joiner = gap > 0.12 * height && !last.text.endsWith(' ') && !piece.text.startsWith(' ') ? ' ' : '';
      last.text += joiner + piece.text;
      last.x1 = Math.max(last.x1, piece.x + piece.width);
    } else {
      last = { text: piece.text, x0: piece.x, x1: piece.x + piece.width };
      cells.push(last);
    }
  }
  let blank = false;
  for (let k = 0; k < cells.length; k++) {
    const c = cells[k] as Cell;
    const text = c.text.trim();
    // Most texts have no run of white space to squash: the pattern only where it changes something.
    c.text = squashable(text) ? text.replace(SPACES, ' ') : text;
    if (c.text === '') blank = true;
  }
  return blank ? cells.filter((c) => c.text !== '') : cells;
}

/** Whether /\s+/g would change a text replaced by one space: a white space other than " ", or two together. */
function squashable(text: string): boolean {
  let previous = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 0x20;
    const white = space || isOtherWhiteSpace(c);
    if (white && (!space || previous)) return true;
    previous = white;
  }
  return false;
}

/** JavaScript's \s (white space and line terminators) other than the plain space. */
function isOtherWhiteSpace(c: number): boolean {
  if (c < 0xa0) return c >= 0x09 && c <= 0x0d;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * A text document as one page: each line as it is, cells split where two or more spaces
 * or a tab stand between words (how plain-text invoices line up their columns). x is the
 * character column, every line one unit high.
 */
export function layoutText(text: string): Layout {
  const rawLines = text.replace(/\r\n?/g, '\n').split('\n');
  const lines: Line[] = [];
  for (const [i, raw] of rawLines.entries()) {
    const expanded = expandTabs(raw);
    const cells: Cell[] = [];
    for (const m of expanded.matchAll(/\S+(?: \S+)*/g)) {
      cells.push({ text: m[0], x0: m.index, x1: m.index + m[0].length });
    }
    if (cells.length > 0) lines.push({ page: 1, index: lines.length, y: i, height: 1, cells });
  }
  return { pages: [{ number: 1, lines }] };
}

function expandTabs(line: string): string {
  let out = '';
  for (const ch of line) out += ch === '\t' ? `${' '.repeat(8 - (out.length % 8))} ` : ch;
  return out;
}

/** Horizontal overlap of two spans, in the units of the page. */
export function overlap(a: { x0: number; x1: number }, b: { x0: number; x1: number }): number {
  return Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
}

/** The usual distance between consecutive baselines of a page (its text's line pitch). */
export function linePitch(lines: readonly Line[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const a = lines[i - 1];
    const b = lines[i];
    if (a && b) gaps.push(b.y - a.y);
  }
  if (gaps.length === 0) return lines[0]?.height ?? 1;
  gaps.sort((x, y) => x - y);
  return gaps[Math.floor(gaps.length / 2)] ?? 1;
}
