import type { Cell, Line } from './layout.ts';
import { BLANK_GAP_EM, type Doc, type ScopeLine } from './scope.ts';

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
/**
 * A postcode and its town ("12345 Stadthausen", "D-07545 GERA", "Springfield, IL 62701", "London EC1A 1BB",
 * "M1 1AA Manchester", "D02 XA00 Dublin").
 */
const POSTCODE =
  /^(?:[A-Z]{1,2}-)?\d{4,5}\s+\p{L}|^\p{L}[\p{L} .'-]*,?\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?$|\s[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}$|^[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}\s+\p{L}|^[A-Z]\d[\dW]\s[A-Z\d]{4}\s+\p{L}/u;
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

/** ANY_SEPARATOR needs one of these characters: a text without any (most cells) skips its dearer search. */
const SEPARATOR_CHARS = /[●•·∙|\-–]/;

export function hasSeparator(c: Pick<Cell, 'text'>): boolean {
  return SEPARATOR_CHARS.test(c.text) && ANY_SEPARATOR.test(c.text);
}

/** The one address window of the document, or null. */
export function addressWindow(doc: Doc, readsAsName: (t: string) => boolean): AddressWindow | null {
  const scope = doc.whole ?? doc.scope;
  let found: AddressWindow | null = null;
  for (let i = 0; i < scope.length; i++) {
    const sl = scope[i];
    // Without a separator, a line is one part: no return line.
    if (!sl?.cells.some(hasSeparator)) continue;
    const read = partsOf(sl);
    const first = read?.cells[0];
    const last = read?.cells.at(-1);
    if (!read || !first || !last || !isReturnLine(read.parts, readsAsName)) continue;
    const span = { x0: first.x0, x1: last.x1 };
    const below: Array<{ line: Line; cell: Cell }> = [];
    for (const next of scope.slice(i + 1)) {
      // The return line's small print is no measure of the address run: the larger of the two heights is.
      const height = Math.max(sl.line.height, next.line.height);
      if (next.line.page !== sl.line.page || next.line.y - sl.line.y > ADDRESS_EM * height) break;
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

/** Legal forms written after a company's name: spelled out or with dots, any case. */
const LEGAL_FORM_WORDS =
  /(?:^|\s)(?:gmbh(?:\s*&\s*co\.?\s*kg)?|mbh|a\.\s?g\.|e\.\s?k\.|e\.\s?v\.|kgaa|sarl|s\.a\.r\.l\.|s\.a\.s\.?|s\.a\.|eurl|sasu|ltd\.?|limited|plc|llp|llc|inc\.?|corp\.?|b\.v\.|n\.v\.|s\.r\.l\.|s\.p\.a\.|s\.l\.)$/iu;
/** Short legal forms, only in capitals ("Muster AG", "Bau KG", "Vins SA"). */
const LEGAL_FORM_CAPS = /(?:^|\s)(?:AG|KG|OHG|GbR|UG|SA|SAS|BV|NV|SRL|SpA|SE)$/u;

/** Whether a line is a postcode and its town ("12345 Stadthausen", "Springfield, IL 62701"). */
export function isPostcodeLine(text: string): boolean {
  return POSTCODE.test(text.trim());
}

/** Whether a name ends with a company's legal form ("Muster GmbH", "Au bon moulin SARL", "Acme Inc."). */
export function hasLegalForm(name: string): boolean {
  const t = name.trim().replace(/[,\s]+$/, '');
  return LEGAL_FORM_WORDS.test(t) || LEGAL_FORM_CAPS.test(t);
}

/** How many lines below the letterhead the addressee's block may run to its postcode. */
const ADDRESSEE_LINES = 6;

/**
 * The letterhead of a letter: page 1's first line of text, alone on its line (or wrapped onto
 * the line just under it), a company's name with its legal form ("Muster GmbH", "MVM
 * Musterhafter" over "Versicherungsverein a.G."), set apart by a blank gap from an addressee's
 * block below it in its column that ends with a postcode. The first block of a page with no
 * letterhead text is the addressee's own: it holds the postcode, and is no letterhead.
 */
export function letterhead(doc: Doc, readsAsName: (t: string) => boolean): WindowParty | null {
  const lines = (doc.whole ?? doc.scope).filter((sl) => sl.line.page === 1 && sl.cells.length > 0);
  const [first, second] = lines;
  const cell = first?.cells[0];
  if (!first || !cell || first.cells.length !== 1) return null;
  const height = (a: ScopeLine, b: ScopeLine) => Math.max(a.line.height, b.line.height);
  const under = (a: ScopeLine, b: ScopeLine) =>
    Math.abs((b.cells[0]?.x0 ?? Infinity) - (a.cells[0]?.x0 ?? 0)) < a.line.height;
  let text = cell.text.trim().replace(/\s+/g, ' ');
  let last = first;
  if (!hasLegalForm(text) && second && second.cells.length === 1 && under(first, second)) {
    if (second.line.y - first.line.y > 1.6 * height(first, second)) return null;
    text = `${text} ${second.cells[0]?.text.trim().replace(/\s+/g, ' ')}`;
    last = second;
  }
  if (!hasLegalForm(text) || !readsAsName(text)) return null;
  // A blank gap, then the addressee's block in the letterhead's column, down to its postcode.
  const rest = lines.slice(lines.indexOf(last) + 1);
  const [next] = rest;
  if (!next || !under(first, next) || next.line.y - last.line.y <= BLANK_GAP_EM * height(last, next)) return null;
  let previous = next;
  for (const sl of rest.slice(0, ADDRESSEE_LINES)) {
    if (sl !== next && sl.line.y - previous.line.y > BLANK_GAP_EM * height(previous, sl)) return null;
    const own = sl.cells.find((c) => Math.abs(c.x0 - cell.x0) < first.line.height);
    if (!own) return null;
    if (POSTCODE.test(own.text.trim())) return { text, line: first.line, cell };
    previous = sl;
  }
  return null;
}
