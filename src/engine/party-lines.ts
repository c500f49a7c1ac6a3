import { NUMBER_KEY_WORDS, anyOf } from './vocabulary/role-words.ts';
import type { Scope } from './scope.ts';
import { hasLegalForm, isPostcodeLine } from './window.ts';

/**
 * What a line of a party's block is when it is not the party's name: its country ("DE"),
 * a key and its value ("Nummer : 549910", "Kunden-Nr. 4711"), a registered number ("GLN
 * 4304171000002", or "GLN" over "4304171000002"), a contact person ("Buyer contact name",
 * "Ansprechpartner: Herr Muster"). A reader passes over such lines to the name; a name is
 * never joined with them.
 */

const REGIONS = new Intl.DisplayNames(['en'], { type: 'region' });

/** A country's ISO code alone ("DE", "FR"), not a legal form that looks like one ("AG", "SA"). */
export function isCountryCode(text: string): boolean {
  const t = text.trim();
  if (!/^[A-Z]{2}$/.test(t) || hasLegalForm(t)) return false;
  try {
    return REGIONS.of(t) !== t;
  } catch {
    return false;
  }
}

/** A key and its value, or a key waiting for the value beside it: a few words, then a colon. */
const KEY_VALUE = /^[\p{L}][\p{L}\p{M}\d .'’\-/#°()]{0,40}?\s?:(?:\s|$)/u;
/** A key with a number word and its number, no colon ("Kunden-Nr. 4711", "Customer No 12"), or the key alone over its number. */
const NUMBERED_KEY = new RegExp(
  `^(?:[\\p{L}][\\p{L}\\p{M}.-]*\\s?){1,3}(?:${NUMBER_KEY_WORDS.join('|')})\\.?(?:\\s*[\\p{L}\\p{N}-]*\\d|\\s*:?$)`,
  'iu',
);
/** A registered number's scheme, alone or before its digits. */
const SCHEME = /^(?:GLN|GTIN|EAN|ILN|DUNS|D-U-N-S|SIRET|SIREN|BIC|ID|LEI|EORI|UST-?ID|VAT)\b/i;

/** A registered number: a scheme and its digits, the digits alone ("4304171000002", "(GTIN)" after), or the scheme alone. */
function isIdLine(text: string): boolean {
  const t = text
    .trim()
    .replace(/\s*\([^()]*\)$/, '')
    .trim();
  // A scheme in parentheses alone ("(GTIN)" under its number), or the scheme alone ("GLN" over it).
  if (t === '') return /^\([\p{L}\d\s-]{2,12}\)$/u.test(text.trim());
  if (/^[A-Z]{2,5}:?$/.test(t)) return SCHEME.test(t);
  const digits = (t.match(/\d/g) ?? []).length;
  const letters = (t.match(/\p{L}/gu) ?? []).length;
  if (digits < 4) return false;
  return letters === 0 || (SCHEME.test(t) && letters <= 8);
}

/** Words that say a line names a contact person, not the party itself. */
const CONTACT = new RegExp(`(?:^|[\\s,(])${anyOf('contactPatterns')}\\b`, 'iu');
/** A department of the party on a line of its own ("Accounts Payable", "Buchhaltung"): no party's name. */
const DEPARTMENT = new RegExp(`^${anyOf('departmentPatterns')}$`, 'iu');

function isContactLine(text: string): boolean {
  return CONTACT.test(text) || DEPARTMENT.test(text.trim());
}

/**
 * A postal endorsement over an address ("Einschreiben", "Persönlich/Vertraulich", "Private &
 * Confidential", "Recommandé"): printed where the addressee's name would be, and no name.
 */
const ENDORSEMENT = new RegExp(`^${anyOf('endorsementPatterns')}$`, 'iu');

export function isEndorsement(text: string): boolean {
  return ENDORSEMENT.test(text.trim());
}

/** A line a reader passes over to a party's name: a key and value, a registered number, a contact. */
export function isKeyLine(text: string): boolean {
  const t = text.trim();
  return KEY_VALUE.test(t) || NUMBERED_KEY.test(t) || isIdLine(t) || isContactLine(t);
}

/**
 * A heading over another party's ids than the issuer's: the addressee's ("Vos identifiants",
 * "Ihre Angaben", "Your details") or a tax representative's ("Représentant fiscal",
 * "Steuervertreter"). A VAT id under it is not the seller's.
 */
const FOREIGN_HEADING = new RegExp(
  `^(?:${anyOf('yoursPatterns')}\\s+[\\p{L}-]+(?:\\s+[\\p{L}-]+)?|${anyOf('representativePatterns')})\\s*:?$`,
  'iu',
);

export function isForeignHeading(text: string): boolean {
  return FOREIGN_HEADING.test(text.trim());
}

/** A street and its number: an address's line, never a name. */
const STREET = new RegExp(
  `^\\d+[a-z]?,?\\s+\\p{L}|\\p{L}${anyOf('streetSuffixPatterns')}\\s*\\d+[a-z]?\\b|^${anyOf('streetPrefixPatterns')}\\s`,
  'iu',
);

/** A street and its number, or a postcode and its town (window.ts): an address's line, never a name. */
export function isAddressLine(text: string): boolean {
  return STREET.test(text.trim()) || isPostcodeLine(text);
}

/**
 * Whether a name on line `at` of a block may go on in the line under it: a name wrapped in a
 * narrow column ("Greenfield Hotels" over "Group") reads like a name over a department. The
 * next line, right under it in the same column, is words only (no digits, colon, key or
 * address), the name holds no legal form ("Kunden AG Mitte" over a contact is whole), and no
 * line of the block of two words or more reaches as far as the name followed by the next
 * line's first word would: the column may have been too narrow for it (a cell further right
 * on the line says nothing of the column's width). Then the first line alone may be a part
 * of the name.
 */
export function mayWrapOnto(block: Scope, at: number): boolean {
  const first = block[at];
  const next = block[at + 1];
  const [name] = first?.cells ?? [];
  const [cell, ...more] = next?.cells ?? [];
  if (!first || !next || !name || !cell || more.length > 0) return false;
  const height = Math.max(first.line.height, next.line.height);
  if (next.line.page !== first.line.page || next.line.y - first.line.y > 2 * height) return false;
  if (Math.abs(cell.x0 - name.x0) > height) return false;
  const t = cell.text.trim();
  if (!/^\p{L}/u.test(t) || /[\d:@]/.test(t) || isKeyLine(t) || isAddressLine(t) || namesLegalForm(name.text))
    return false;
  const word = t.split(/\s+/)[0] ?? t;
  const reach = name.x1 + 0.25 * height + ((cell.x1 - cell.x0) * word.length) / Math.max(t.length, 1);
  // A one-word line proves nothing of the column's width: a long word ("NL241652583B01") overflows it.
  return !block.some((sl) => sl.cells.some((c) => c.x1 >= reach && /\S\s+\S/.test(c.text.trim())));
}

/** A legal form ends the name or one of its first words ("Kunden AG Mitte"). */
function namesLegalForm(name: string): boolean {
  const words = name.trim().split(/\s+/);
  return words.some((_, i) => hasLegalForm(words.slice(0, i + 1).join(' ')));
}
