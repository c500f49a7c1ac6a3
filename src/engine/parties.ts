import type { Field, ObjectField, Results } from '../contract/index.ts';
import { leadingVatId } from './identifiers.ts';
import type { Cell } from './layout.ts';
import { type Doc, type Scope, type ScopeLine, BLANK_GAP_EM } from './scope.ts';
import { cellsLabelling, labelledCells } from './scope-index.ts';
import { placeOf } from './tables.ts';
import type { FieldPath, Grounding } from './types.ts';
import { parseDate } from './dates.ts';
import { parseEmail, parsePhone } from './values.ts';
import { PARTY_CONCEPTS } from './vocabulary/index.ts';
import { SALUTATIONS, anyOf } from './vocabulary/role-words.ts';
import { addressWindow, hasLegalForm, letterhead } from './window.ts';
import { letterheadBlock, unheadedAddressee } from './addressee.ts';
import { isAddressLine, isEndorsement, isForeignHeading, isKeyLine, mayWrapOnto } from './party-lines.ts';

/**
 * Objects and parties. An object's fields are looked for in the blocks under its headings
 * ("Bill To", "Verkäufer", "Käufer / Leistungsempfänger"); a party's block also gives its
 * name when it opens with one and no label names it, and the seller's VAT id may stand in
 * the letterhead or footer, announced by a VAT-id label, outside every other party's block.
 */

/**
 * The blocks under each heading of an object: the lines below it, down to a blank gap or
 * another object's heading, keeping only the cells from the heading's left edge to the next
 * cell on the heading's line (so two blocks side by side stay apart). A heading with a value
 * beside it ("Kunde: 4711") is a key, not a heading.
 */
export function blocksOf(path: FieldPath, doc: Doc): Scope[] {
  const blocks: Scope[] = [];
  // A heading is a cell whose label names the object.
  for (const { i, j } of cellsLabelling(path, doc)) {
    const sl = doc.scope[i];
    const cell = sl?.cells[j];
    if (!sl || !cell) continue;
    if (!isHeading(cell.text, path, doc)) continue;
    const beside = sl.cells[j + 1];
    if (beside && !doc.labels.isLabelled(beside.text) && !isAnyHeading(beside.text, doc)) continue;
    const block = blockUnder(doc, i, cell, beside?.x0 ?? Infinity);
    if (block.length > 0) blocks.push(block);
  }
  return blocks;
}

/**
 * The lines under a heading cell on line `i`, from its left edge to `right`: down to a blank
 * gap or another object's heading. Key lines (ids, numbers, contacts) and one blank gap may
 * stand between the heading and the party's name ("Verkäufer:", a gap, "Nummer : 549910",
 * "Lieferant GmbH"): the block ends at a blank gap only once a line of another kind is in it.
 */
function blockUnder(doc: Doc, i: number, cell: Cell, right: number): Scope {
  const sl = doc.scope[i];
  if (!sl) return [];
  const block: Scope = [];
  const left = cell.x0 - sl.line.height;
  let previous = sl.line;
  let named = false;
  let gapped = false;
  for (let k = i + 1; k < doc.scope.length; k++) {
    const next = doc.scope[k];
    if (!next) break;
    const cells = next.cells.filter((c) => c.x0 >= left && c.x0 < right);
    if (cells.length === 0) continue;
    if (next.line.page !== previous.page) break;
    const gap = (next.line.y - previous.y) / Math.max(previous.height, next.line.height);
    if (gap > (named ? BLANK_GAP_EM : LEAD_GAP_EM)) break;
    if (cells.some((c) => isAnyHeading(c.text, doc))) break;
    gapped ||= gap > BLANK_GAP_EM;
    block.push({ line: next.line, cells });
    named ||= !cells.every((c) => isKeyLine(c.text));
    previous = next.line;
  }
  // Past a blank gap, lines with no address under their first (a remark, another section further
  // down the page) are no party's block: its key lines only.
  const keyLine = (l: ScopeLine) => l.cells.every((c) => isKeyLine(c.text));
  const [, ...rest] = block.filter((l) => !keyLine(l));
  if (gapped && !rest.some((l) => l.cells.some((c) => isAddressLine(c.text)))) return block.filter(keyLine);
  return block;
}

/**
 * The cells of the blocks under every heading `heads` accepts, each block as `blockUnder` reads
 * it; `column`: only those whose left edge stands under the heading's (a heading alone on its
 * line reaches across the page, over other blocks further right).
 */
function cellsUnder(doc: Doc, heads: (text: string) => boolean, o: { column?: boolean } = {}): Set<Cell> {
  const out = new Set<Cell>();
  for (let i = 0; i < doc.scope.length; i++) {
    const sl = doc.scope[i];
    for (const [j, cell] of (sl?.cells ?? []).entries()) {
      if (!sl || !heads(cell.text)) continue;
      const aligned = (c: Cell) => !o.column || Math.abs(c.x0 - cell.x0) < sl.line.height;
      for (const under of blockUnder(doc, i, cell, sl.cells[j + 1]?.x0 ?? Infinity))
        for (const c of under.cells) if (aligned(c)) out.add(c);
    }
  }
  return out;
}

/** How far below its heading, in text heights, a block's first line (or a line after its key lines) may stand. */
const LEAD_GAP_EM = 5;

function isHeading(text: string, path: FieldPath, doc: Doc): boolean {
  const m = doc.labels.match(text);
  return (
    m !== null &&
    m.kind === 'clean' &&
    m.rest === '' &&
    m.box === undefined &&
    m.extra === undefined &&
    m.owners.has(path)
  );
}

function isAnyHeading(text: string, doc: Doc): boolean {
  const m = doc.labels.match(text);
  return (
    m !== null &&
    m.kind === 'clean' &&
    m.rest === '' &&
    m.extra === undefined &&
    ([...m.owners].some((o) => doc.objectPaths.has(o)) || [...m.concepts].some((c) => PARTY_CONCEPTS.has(c)))
  );
}

/**
 * The party's name from the blocks' first lines: one cell that reads as a name (letters,
 * no label, no colon, no date, e-mail, phone or salutation), the same in every block.
 */
function nameOfBlocks(blocks: readonly Scope[], doc: Doc): { text: string; at: ReturnType<typeof placeOf> } | null {
  let found: { text: string; at: ReturnType<typeof placeOf> } | null = null;
  for (const block of blocks) {
    // Key lines above the name (numbers, registered ids, a contact person) are passed over.
    const at = block.findIndex((sl) => !idLine(sl) && !sl.cells.every((c) => isKeyLine(c.text)));
    const first = block[at];
    const [cell, ...more] = first?.cells ?? [];
    if (!first || !cell || more.length > 0 || !readsAsName(cell, doc) || isAddressLine(cell.text)) return null;
    if (mayWrapOnto(block, at)) return null;
    if (found && squeeze(found.text) !== squeeze(cell.text)) return null;
    found ??= { text: cell.text, at: placeOf(first.line, cell) };
  }
  return found;
}

const squeeze = (s: string) => s.replace(/\s+/g, '').toLowerCase();

/**
 * A line that is only a party's registered number, a code and its digits ("GLN 4304171000002",
 * "DUNS 150483782"), maybe followed by other numbers under their keys ("GLN 4333741000005
 * Lief-Nr: 549910"): printed above the name in some blocks, so the name is on the next line.
 */
const ID_LINE = /^[A-Z]{2,5}[\s:.#-]*\d[\d\s]{7,}(?:\s+\p{L}[\p{L}.-]{0,20}[\s:.#]*\d[\d\s]{2,})*$/u;
function idLine(sl: ScopeLine): boolean {
  const [cell, ...more] = sl.cells;
  return cell !== undefined && more.length === 0 && ID_LINE.test(cell.text.trim());
}

function readsAsName(cell: Cell, doc: Doc): boolean {
  const t = cell.text.trim();
  if (t.includes(':') || doc.labels.isLabelled(t) || doc.labels.isBareLabel(t)) return false;
  const letters = (t.match(/\p{L}/gu) ?? []).length;
  const digits = (t.match(/\d/g) ?? []).length;
  if (letters < 2 || digits > letters) return false;
  if (parseEmail(t) !== null || parsePhone(t) !== null || parseDate(t) !== null || /https?:|www\./i.test(t))
    return false;
  const firstWord = t.split(/[\s.]+/)[0]?.toLowerCase() ?? '';
  return !SALUTATIONS.has(firstWord) && !isEndorsement(t);
}

/**
 * What a party's blocks and the page add to its object once its labelled fields are read:
 * its name from the blocks' first lines, and for the seller a VAT id announced anywhere
 * outside the other parties' blocks. Only fields still null are filled.
 */
export function fillParty(
  field: ObjectField,
  path: FieldPath,
  outPath: string,
  results: Results,
  blocks: readonly Scope[],
  doc: Doc,
  grounding: Grounding,
): void {
  const concept = doc.labels.conceptOf.get(path);
  if (concept === undefined || !PARTY_CONCEPTS.has(concept)) return;
  const vat =
    concept === 'seller'
      ? field.fields.find((f): f is Field => doc.labels.conceptOf.get(`${path}.${f.name}`) === 'vat_id')
      : undefined;
  if (vat && results[vat.name] === null) {
    const found = sellerVatId(path, doc);
    if (found) {
      results[vat.name] = found.value;
      grounding[`${outPath}.${vat.name}`] = found.at;
    }
  }
  const name = field.fields.find((f) => f.name === 'name' && f.type === 'string');
  if (!name || results.name !== null) return;
  // The seller's imprint: its legal name on the line that prints its VAT id ("Muster GmbH │ USt-IdNr: DE…").
  const vatId = vat ? results[vat.name] : null;
  const imprint = typeof vatId === 'string' ? imprintName(vatId, doc) : null;
  // A label of the name in its blocks that gave no value: the name stays null.
  if (blocks.length > 0 && labelledIn(blocks, `${path}.name`, doc)) return;
  if (blocks.length > 0) {
    const found = nameOfBlocks(blocks, doc);
    // The block and the imprint name two sellers: which one is meant is a guess.
    if (found && imprint && squeeze(found.text) !== squeeze(imprint.text)) return;
    if (found) {
      results.name = found.text.replace(/\s+/g, ' ');
      grounding[`${outPath}.name`] = found.at;
      return;
    }
  }
  if (imprint) {
    results.name = imprint.text;
    grounding[`${outPath}.name`] = imprint.at;
    return;
  }
  if (blocks.length > 0 || (concept !== 'seller' && concept !== 'buyer')) return;
  // No block of the party's own: the letter's address window names the seller and the buyer.
  const fits = (t: string) => readsAsName({ text: t, x0: 0, x1: 0 }, doc);
  const window = addressWindow(doc, fits);
  const party = concept === 'seller' ? window?.sender : window?.recipient;
  if (party) {
    results.name = party.text;
    grounding[`${outPath}.name`] = placeOf(party.line, party.cell);
    return;
  }
  // Nor a window: the letterhead of page 1, a company's name above the addressee's block;
  // the addressee's bare block, a name over its address, under no heading.
  const head = window
    ? null
    : concept === 'seller'
      ? (letterhead(doc, fits) ?? (typeof vatId === 'string' ? letterheadBlock(doc, fits, vatId) : null))
      : unheadedAddressee(
          doc,
          fits,
          cellsUnder(doc, (t) => isAnyHeading(t, doc), { column: true }),
        );
  if (head) {
    results.name = head.text;
    grounding[`${outPath}.name`] = placeOf(head.line, head.cell);
  }
}

/**
 * The seller's legal name as its imprint prints it: the first cell of a line that also prints
 * its VAT id, ending with a legal form ("MUSTER GMBH │ Geschäftsführung: │ USt-IdNr: DE123456789").
 * Two different names: none.
 */
function imprintName(vatId: string, doc: Doc): { text: string; at: ReturnType<typeof placeOf> } | null {
  const id = vatId.replace(/\s+/g, '').toUpperCase();
  let found: { text: string; at: ReturnType<typeof placeOf> } | null = null;
  for (const sl of doc.whole ?? doc.scope) {
    const [first, ...rest] = sl.cells;
    if (!first || !rest.some((c) => c.text.replace(/\s+/g, '').toUpperCase().includes(id))) continue;
    const text = first.text.trim().replace(/\s+/g, ' ');
    if (!hasLegalForm(text) || !readsAsName(first, doc)) continue;
    if (found && squeeze(found.text) !== squeeze(text)) return null;
    found ??= { text, at: placeOf(sl.line, first) };
  }
  return found;
}

/**
 * Words that make a VAT-id label another party's than the seller's: the buyer's ("N° TVA
 * client", "Customer VAT No", "Ihre USt-IdNr.") or a tax representative's ("VAT No (fiscal
 * representative)", "USt-IdNr. Fiskalvertreter").
 */
const OTHER_PARTY_WORDS = new RegExp(`(?:^|[^\\p{L}])${anyOf('otherPartyPatterns')}(?![\\p{L}])`, 'iu');

function namesOtherParty(text: string): boolean {
  return OTHER_PARTY_WORDS.test(text.split(':')[0] ?? '');
}

/** A heading of a few words that names the buyer ("Customer details", "Kunde", "Client :"). */
function namesBuyerHeading(text: string): boolean {
  const t = text.trim().replace(/\s*:$/, '');
  return t.split(/\s+/).length <= 3 && !/[\d:]/.test(t) && namesOtherParty(t);
}

function labelledIn(blocks: readonly Scope[], path: FieldPath, doc: Doc): boolean {
  return blocks.some((b) => b.some((sl) => sl.cells.some((c) => doc.labels.match(c.text)?.owners.has(path))));
}

/**
 * The seller's VAT id printed outside the blocks of other parties: after a VAT-id label
 * ("USt-IdNr.", "VAT No", "N° TVA") in the id's format, or after a tax label ("TVA :",
 * "VAT:") with valid check digits. Invoices must print the seller's; a buyer's is printed in
 * the buyer's block or under a label that says so ("N° TVA client"). Two different ids: null.
 */
function sellerVatId(path: FieldPath, doc: Doc): { value: string; at: ReturnType<typeof placeOf> } | null {
  const others = new Set<Cell>();
  for (const p of doc.objectPaths) {
    if (p === path) continue;
    const concept = doc.labels.conceptOf.get(p);
    if (concept === undefined || !PARTY_CONCEPTS.has(concept)) continue;
    for (const block of blocksOf(p, doc)) for (const sl of block) for (const c of sl.cells) others.add(c);
  }
  // The addressee's ids ("Vos identifiants", a block under "Customer details") and a tax
  // representative's block are no seller's either.
  for (const c of cellsUnder(doc, (t) => isForeignHeading(t) || namesBuyerHeading(t))) others.add(c);
  const seen = new Map<string, ReturnType<typeof placeOf>>();
  for (const { i, j, m } of labelledCells(doc)) {
    const sl = doc.scope[i];
    const cell = sl?.cells[j];
    if (!sl || !cell || m.extra !== undefined || m.box !== undefined) continue;
    const vatLabel = m.concepts.has('vat_id');
    if (!vatLabel && !(m.concepts.has('tax') && m.colon)) continue;
    if (others.has(cell) || namesOtherParty(cell.text)) continue;
    const beside = sl.cells[j + 1];
    const valueCell = m.rest !== '' ? cell : beside;
    const text = m.rest !== '' ? m.rest : beside?.text.replace(/^:\s*/, '');
    if (!valueCell || text === undefined) continue;
    const id = leadingVatId(text, !vatLabel);
    if (id !== null) seen.set(id, placeOf(sl.line, valueCell));
  }
  if (seen.size !== 1) return null;
  const [[value, at] = ['', undefined]] = seen;
  return at ? { value, at } : null;
}
