import type { Cell, Line } from './layout.ts';
import type { Doc, ScopeLine } from './scope.ts';

/**
 * The address window of a letter (DIN 5008, and the windowed envelopes of most countries):
 * the sender's return line in small print ("Bei Spiel GmbH ● Ecke 12 ● 12345 Stadthausen")
 * with the recipient's address right below it. The sender is the seller and the recipient
 * the buyer. Read only when the layout is unambiguous: one such line in the document, its
 * parts a name, a street and a postcode with its town; below it, in its column, a name
 * then an address that ends with a postcode.
 */

export type WindowParty = { text: string; line: Line; cell: Cell };
export type AddressWindow = { sender: WindowParty; recipient: WindowParty };

/** What separates the parts of a return line: a bullet, a middle dot, a bar, a dash between spaces. */
const SEPARATOR = /\s*[●•·∙|]\s*|\s+[-–]\s+/u;
/** Whether a text holds a separator of SEPARATOR, or a mark that joins cells (partsOf). */
const ANY_SEPARATOR = /[●•·∙|]|\s[-–]\s/u;
/** A postcode and its town ("12345 Stadthausen", "D-07545 GERA", "Springfield, IL 62701", "London EC1A 1BB"). */
const POSTCODE =
  /^(?:[A-Z]{1,2}-)?\d{4,5}\s+\p{L}|^\p{L}[\p{L} .'-]*,?\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?$|\s[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}$/u;
/** How far below the return line the recipient's first line may stand, and its address run, in text heights. */
const FIRST_LINE_EM = 3;
const ADDRESS_EM = 12;

/** The return line's parts: its cells joined across separator cells, each cell split at its separators. */
function partsOf(sl: ScopeLine): { parts: string[]; cells: Cell[] } | null {
  const [first] = sl.cells;
  if (!first) return null;
  const cells = [first];
  const mark = /[●•·∙|]/u;
  for (let k = 1; k < sl.cells.length; k++) {
    const before = cells.at(-1)?.text.trim() ?? '';
    const next = sl.cells[k];
    if (!next) break;
    // A bullet drawn as a piece of its own joins the cell before it, the one after it, or neither.
    if (!mark.test(before.slice(-1)) && !mark.test(next.text.trim()[0] ?? '')) break;
    cells.push(next);
  }
  const parts = cells
    .flatMap((c) => c.text.split(SEPARATOR))
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return { parts, cells };
}

function isReturnLine(parts: readonly string[], readsAsName: (t: string) => boolean): boolean {
  if (parts.length < 3) return false;
  const [name] = parts;
  const town = parts.slice(1).findIndex((p) => POSTCODE.test(p));
  return name !== undefined && readsAsName(name) && town >= 1 && town >= parts.length - 3;
}

/** The one address window of the document, or null. */
export function addressWindow(doc: Doc, readsAsName: (t: string) => boolean): AddressWindow | null {
  const scope = doc.whole ?? doc.scope;
  let found: AddressWindow | null = null;
  for (const [i, sl] of scope.entries()) {
    // Without a separator, a line is one part: no return line.
    if (!sl.cells.some((c) => ANY_SEPARATOR.test(c.text))) continue;
    const read = partsOf(sl);
    const first = read?.cells[0];
    const last = read?.cells.at(-1);
    if (!read || !first || !last || !isReturnLine(read.parts, readsAsName)) continue;
    const span = { x0: first.x0, x1: last.x1 };
    const below: Array<{ line: Line; cell: Cell }> = [];
    for (const next of scope.slice(i + 1)) {
      if (next.line.page !== sl.line.page || next.line.y - sl.line.y > ADDRESS_EM * sl.line.height) break;
      const under = next.cells.filter((c) => c.x0 < span.x1 && c.x1 > span.x0 && c.x0 < span.x0 + 4 * sl.line.height);
      if (under.length === 0) continue;
      const [cell] = under;
      if (under.length > 1 || !cell) break;
      below.push({ line: next.line, cell });
    }
    const [name, ...address] = below;
    if (!name || name.line.y - sl.line.y > FIRST_LINE_EM * Math.max(sl.line.height, name.line.height)) continue;
    if (!readsAsName(name.cell.text) || !address.some((a) => POSTCODE.test(a.cell.text))) continue;
    if (found) return null;
    const [sender = ''] = read.parts;
    found = {
      sender: { text: sender, line: sl.line, cell: first },
      recipient: { text: name.cell.text, line: name.line, cell: name.cell },
    };
  }
  return found;
}
