import { NUMBER_WORDS } from './vocabulary/role-words.ts';

/**
 * The words of a text as labels compare them: lower case, without accents, number words
 * alike ("No.", "Nr", "#"), a German compound's suffix ("*rechnung") matching its word.
 */

export type Token = { word: string; start: number; end: number };

export function normaliseWord(word: string): string {
  // ASCII has no accents to strip and decomposes to itself: lower case is all (most words on most pages).
  if (isAscii(word)) return word.toLowerCase();
  return word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Number words compare equal: index them under one key. */
export function indexWord(word: string): string {
  return NUMBER_WORDS.has(word) ? '#' : word;
}

/**
 * The words of a text; words inside parentheses are left out ("Handelsrechnung (380) Nr.").
 * `limit`: at most this many, the first (a label is read from a cell's first words).
 */
export function tokens(text: string, limit = Number.POSITIVE_INFINITY): Token[] {
  if (!text.includes('(') && isAscii(text)) return asciiTokens(text, limit);
  const out: Token[] = [];
  const parens = text.includes('(')
    ? [...text.matchAll(/\([^()]*\)/g)].map((m) => [m.index, m.index + m[0].length] as const)
    : [];
  for (const m of text.matchAll(/[nN][º°]|[\p{L}\p{N}]+|#|№/gu)) {
    if (out.length >= limit) break;
    if (parens.length > 0 && parens.some(([a, b]) => m.index > a && m.index < b)) continue;
    const word = normaliseWord(m[0]);
    out.push({
      word: word === '№' ? '#' : word,
      start: m.index,
      end: m.index + m[0].length,
    });
  }
  return out;
}

/** `tokens` of an ASCII text without parentheses (most cells): runs of letters and digits, and "#". */
function asciiTokens(text: string, limit: number): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length && out.length < limit) {
    const c = text.charCodeAt(i);
    if (c === 0x23) {
      out.push({ word: '#', start: i, end: i + 1 });
      i++;
    } else if (isAsciiAlnum(c)) {
      let j = i + 1;
      while (j < text.length && isAsciiAlnum(text.charCodeAt(j))) j++;
      out.push({ word: text.slice(i, j).toLowerCase(), start: i, end: j });
      i = j;
    } else {
      i++;
    }
  }
  return out;
}

function isAsciiAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** A label word this long may be found cut in two by a space (shorter words could be two real words). */
export const SPLIT_WORD_MIN = 7;

export function wordsEqual(labelWord: string, docWord: string): boolean {
  if (labelWord === docWord) return true;
  // "*rechnung": any compound that ends so (Mietrechnung, Baurechnung), as German builds its words.
  if (labelWord.startsWith('*')) return docWord.length > labelWord.length && docWord.endsWith(labelWord.slice(1));
  return NUMBER_WORDS.has(labelWord) && NUMBER_WORDS.has(docWord);
}

/** The words of a field's name: `invoice_number` -> ["invoice", "number"], `dueDate` -> ["due", "date"]. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[_\-\s]+/)
    .filter((w) => w !== '')
    .map(normaliseWord);
}
