import { parseDate } from './dates.ts';

/**
 * Identifiers (invoice numbers, order numbers, ids) are one token-like run. Documents often
 * print a clause after them in the same cell: "RE-20201121/508 issued at 2020-11-21",
 * "471102 vom 05.03.2018", "FA-12 du 13/11/2017". The clause is cut; the date it gives is
 * the date of the document the identifier names.
 */

const CLAUSE =
  /\s+(?:vom|von|du|dated|issued(?:\s+(?:at|on))?|from|del|van|datiert|emessa\s+il|le|d\.d\.|dd)(?=\s|$)(.*)$/iu;

/** Field names whose last word says "identifier". */
const ID_WORDS = new Set(['number', 'no', 'nr', 'num', 'id', 'ref', 'reference', 'code']);

export function isIdentifierName(words: readonly string[]): boolean {
  const last = words.at(-1);
  return last !== undefined && ID_WORDS.has(last);
}

export type Identifier = { id: string | null; date: string | null };

/** The identifier a cell's text writes, with the date of its trailing clause if any. */
export function readIdentifier(text: string): Identifier {
  const t = text.trim().replace(/\s+/g, ' ');
  const clause = CLAUSE.exec(t);
  const head = clause ? t.slice(0, clause.index) : t;
  const date = clause?.[1] !== undefined ? dateIn(clause[1]) : null;
  return { id: tokenLike(head) ? head.replace(/[,;:]$/, '') : null, date };
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
