import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { checkVAT, countries } from 'jsvat-next';
import { parseDate } from './dates.ts';
import { ID_WORDS, anyOf } from './vocabulary/role-words.ts';

/**
 * Identifiers (invoice numbers, order numbers, ids) are one token-like run. Documents often
 * print a clause after them in the same cell: "RE-20201121/508 issued at 2020-11-21",
 * "471102 vom 05.03.2018", "FA-12 du 13/11/2017". The clause is cut; the date it gives is
 * the date of the document the identifier names.
 */

const CLAUSE = new RegExp(`\\s+${anyOf('dateClausePatterns')}(?=\\s|$)(.*)$`, 'iu');

export function isIdentifierName(words: readonly string[]): boolean {
  const last = words.at(-1);
  return last !== undefined && ID_WORDS.has(last);
}

export type Identifier = { id: string | null; date: string | null };

/** The identifier a cell's text writes, with the date of its trailing clause if any. */
export function readIdentifier(text: string): Identifier {
  const t = text.trim().replace(/\s+/g, ' ');
  const clause = CLAUSE.exec(t);
  const head = beforeComma(clause ? t.slice(0, clause.index) : t);
  const date = clause?.[1] !== undefined ? dateIn(clause[1]) : null;
  return { id: tokenLike(head) ? head.replace(/[,;:]$/, '') : null, date };
}

/** "B6100, Lieferschein-Nr. L876": a comma ends the identifier when words follow it, not another id. */
function beforeComma(text: string): string {
  const at = text.search(/[,;] /);
  if (at < 0 || tokenLike(text.slice(at + 2))) return text;
  return text.slice(0, at);
}

/** "GB 987 6543 21" and "R-7" are token-like; "471102 Kunde Muster" is not. */
function tokenLike(text: string): boolean {
  if (!/[\p{L}\p{N}]/u.test(text)) return false;
  const parts = text.split(' ');
  if (parts.length === 1) return true;
  return parts.every((p) => /\d/.test(p) || /^[A-Z]{1,4}$/.test(p));
}

function dateIn(text: string): string | null {
  const t = text.trim().replace(/[,;.]$/, '');
  return parseDate(t);
}

/**
 * The IBAN a cell opens with, as printed: the longest run of its first words whose check
 * digits validate (ibantools), so a tail ("- BIC : BREDFRPP") is left out. None: null.
 */
export function readIban(text: string): string | null {
  const words = text.trim().split(/\s+/);
  const end = words.findIndex((w) => !/^[A-Za-z0-9]+$/.test(w));
  for (let n = end < 0 ? words.length : end; n > 0; n--) {
    const head = words.slice(0, n).join(' ');
    const compact = electronicFormatIBAN(head);
    if (compact && /^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(compact) && isValidIBAN(compact)) return head;
  }
  return null;
}

/**
 * A VAT id as printed ("GB 123 4567 89") when it has the format of its country
 * (jsvat-next), or a US employer id ("12-3456789", what "Tax ID" prints there); `checksum`
 * also asks for a VAT id's check digits, for an id that no VAT-id label announces. Anything
 * else (a German Steuernummer, a SIRET, an id of a country jsvat-next does not know) is null.
 */
export function readVatId(text: string, checksum: boolean): string | null {
  const t = text.trim().replace(/[.,;]$/, '');
  if (!checksum && /^\d{2}-\d{7}$/.test(t)) return t;
  if (!/^[A-Z]{2,3}[\s.-]?[0-9A-Z][0-9A-Z\s.-]*$/.test(t)) return null;
  const r = checkVAT(t, countries);
  if (!r.isSupportedCountry || !r.isValidFormat || (checksum && !r.isValid)) return null;
  return t;
}

/**
 * The VAT id a cell opens with when a separator ends it and other keys follow ("FR11999999998
 * - SIRET : 99999999800010"): read as `readVatId` reads the whole cell. None: null.
 */
export function leadingVatId(text: string, checksum: boolean): string | null {
  const whole = readVatId(text, checksum);
  if (whole !== null) return whole;
  const words = text.trim().split(/\s+/);
  for (let n = Math.min(words.length - 1, 5); n > 0; n--) {
    if (!/^[-–|/•·]$/.test(words[n] ?? '')) continue;
    const id = readVatId(words.slice(0, n).join(' '), checksum);
    if (id !== null) return id;
  }
  return null;
}

/**
 * Whether a cell opens with a VAT id whose check digits hold ("FR11999999998 - SIRET : …"):
 * then the tax label before it ("TVA :", "VAT:") announces the seller's id, not an amount.
 */
export function opensWithVatId(text: string): boolean {
  const words = text.trim().split(/\s+/).slice(0, 5);
  for (let n = words.length; n > 0; n--) if (readVatId(words.slice(0, n).join(' '), true) !== null) return true;
  return false;
}
