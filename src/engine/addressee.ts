import type { Cell, Line } from './layout.ts';
import { isAddressLine, isKeyLine } from './party-lines.ts';
import { BLANK_GAP_EM, type Doc, type ScopeLine } from './scope.ts';
import { parseEmail, parsePhone } from './values.ts';
import { type WindowParty, isPostcodeLine } from './window.ts';

/**
 * The addressee's block when no heading names it (the French layout puts it at the right,
 * under nothing): on page 1, a block of its own column set apart by blank gaps, a name then
 * an address that ends with a postcode and its town (and maybe the country), and nothing
 * else: no key, no phone, no e-mail (those are a sender's letterhead). Page 1's first line
 * heads the letter and is the issuer's. Exactly one such block on the page, or none.
 */

/** How many lines an addressee's bare block holds: a name, at most five lines of address. */
const MIN_LINES = 3;
const MAX_LINES = 6;

type Column = Array<{ line: Line; cell: Cell }>;

/** The run of cells starting at `cell` on line `i`: the cells left-aligned with it on the lines that follow closely. */
function columnFrom(lines: readonly ScopeLine[], i: number, cell: Cell): Column | null {
  const first = lines[i];
  if (!first) return null;
  const aligned = (sl: ScopeLine) => sl.cells.find((c) => Math.abs(c.x0 - cell.x0) < sl.line.height);
  const overlaps = (sl: ScopeLine) => sl.cells.some((c) => c.x0 < cell.x1 && c.x1 > cell.x0);
  // A blank gap above it in its column: the block is no continuation of what stands above.
  // Lines are in reading order: once one stands a blank gap above, every earlier one does too.
  for (let k = i - 1; k >= 0; k--) {
    const above = lines[k];
    if (!above || above.line.page !== first.line.page) break;
    if (first.line.y - above.line.y > BLANK_GAP_EM * Math.max(first.line.height, above.line.height)) break;
    if (overlaps(above)) return null;
  }
  const run: Column = [{ line: first.line, cell }];
  let previous = first.line;
  for (let k = i + 1; k < lines.length && run.length <= MAX_LINES; k++) {
    const next = lines[k];
    if (!next || next.line.page !== previous.page) break;
    if (next.line.y - previous.y > BLANK_GAP_EM * Math.max(previous.height, next.line.height)) break;
    if (!overlaps(next)) continue;
    const own = aligned(next);
    if (!own) return null;
    run.push({ line: next.line, cell: own });
    previous = next.line;
  }
  return run;
}

function isBareAddress(run: Column, readsAsName: (t: string) => boolean): boolean {
  if (run.length < MIN_LINES || run.length > MAX_LINES) return false;
  const [name, ...rest] = run;
  if (!name || !readsAsName(name.cell.text) || isAddressLine(name.cell.text) || isKeyLine(name.cell.text)) return false;
  const texts = rest.map((r) => r.cell.text);
  if (texts.some(contactDetail)) return false;
  // The postcode and town close the block, or stand just above its country.
  const town = texts.findIndex(isPostcodeLine);
  return town >= 0 && town >= texts.length - 2;
}

/** A sender's detail: a key, a phone or fax number (seven digits or more, whatever its prefix), an e-mail, a website. */
function contactDetail(t: string): boolean {
  if (isKeyLine(t) || parsePhone(t) !== null || parseEmail(t) !== null || /https?:|www\./i.test(t)) return true;
  return (t.match(/\d/g) ?? []).length >= 7;
}

/**
 * The issuer's letterhead block: page 1's first line opens a bare block (a name over its
 * address and postcode), and the seller's VAT id is printed on its lines or just under it
 * ("Die Firma │ Tel: …" … "Deutschland │ USt-IdNr. DE…"): the page says whose block it is.
 */
export function letterheadBlock(doc: Doc, readsAsName: (t: string) => boolean, vatId: string): WindowParty | null {
  const lines = (doc.whole ?? doc.scope).filter((sl) => sl.line.page === 1 && sl.cells.length > 0);
  const cell = lines[0]?.cells[0];
  const run = cell ? columnFrom(lines, 0, cell) : null;
  const [name] = run ?? [];
  if (!run || !name || !isBareAddress(run, readsAsName)) return null;
  const id = squeeze(vatId);
  const last = lines.findIndex((sl) => sl.line === run.at(-1)?.line);
  // The invoice's own keys beside the block ("Rechnung Nr.", "Datum"): the block stands beside the
  // invoice's details, as the addressee's does, and the VAT id printed there says nothing of it.
  const invoiceKey = (c: Cell) =>
    [...(doc.labels.match(c.text)?.owners ?? [])].some((o) => !o.includes('.') && !doc.objectPaths.has(o));
  if (lines.slice(0, last + 1).some((sl) => sl.cells.some(invoiceKey))) return null;
  const printsId = lines
    .slice(0, last + 2)
    .some((sl) => sl.cells.some((c) => c !== name.cell && squeeze(c.text).includes(id)));
  return printsId ? { text: name.cell.text, line: name.line, cell: name.cell } : null;
}

const squeeze = (s: string) => s.replace(/\s+/g, '').toUpperCase();

/**
 * `headed`: the cells of the blocks under a party's heading ("Adresse de livraison", "Ship To"),
 * whose addresses are accounted for: none of them is the addressee's bare block. Any other
 * postcode on page 1 is another party's address (the issuer's own block, a block under a heading
 * no vocabulary knows, a delivery address, a footer): which block is the buyer's is then a guess.
 */
export function unheadedAddressee(
  doc: Doc,
  readsAsName: (t: string) => boolean,
  headed: ReadonlySet<Cell>,
): WindowParty | null {
  const lines = (doc.whole ?? doc.scope).filter((sl) => sl.line.page === 1 && sl.cells.length > 0);
  let found: Column | null = null;
  for (let i = 1; i < lines.length; i++) {
    for (const cell of lines[i]?.cells ?? []) {
      const run = columnFrom(lines, i, cell);
      // A block under a party's heading, further below it than a blank gap, is that party's.
      if (!run || run.some((r) => headed.has(r.cell)) || !isBareAddress(run, readsAsName)) continue;
      if (found) return null;
      found = run;
    }
  }
  const [name] = found ?? [];
  if (!found || !name) return null;
  const own = new Set(found.map((r) => r.cell));
  const elsewhere = (c: Cell) => !own.has(c) && !headed.has(c) && isPostcodeLine(c.text);
  if (lines.some((sl) => sl.cells.some(elsewhere))) return null;
  return { text: name.cell.text, line: name.line, cell: name.cell };
}
