import type { LeafType, LeafValue } from '../contract/index.ts';
import { parseDate } from './dates.ts';
import type { DateOrder } from './dates.ts';
import { NO_WORDS, YES_WORDS } from './vocabulary/role-words.ts';

/**
 * Parsers from the text the document shows to the JSON value of a leaf type.
 * Each returns null when the text is not, beyond doubt, a value of its type: the
 * engine's answer is then null, never a guess.
 */

/** Which mark separates decimals in this document, learned from its unambiguous numbers. */
export type DecimalMark = '.' | ',';

/** What a document teaches about its own formats (see hints.ts); absent means "unknown". */
export type FormatHints = { decimalMark?: DecimalMark | undefined; dateOrder?: DateOrder | undefined };

/** ISO 4217 codes the engine recognises as written codes. */
const CURRENCY_CODES = new Set([
  'AUD',
  'BRL',
  'CAD',
  'CHF',
  'CNY',
  'CZK',
  'DKK',
  'EUR',
  'GBP',
  'HKD',
  'HUF',
  'INR',
  'JPY',
  'KRW',
  'MXN',
  'MYR',
  'NOK',
  'NZD',
  'PLN',
  'RON',
  'SEK',
  'SGD',
  'TRY',
  'USD',
  'ZAR',
]);

/**
 * Symbols that name exactly one currency. "$" (USD, CAD, AUD, MXN, ...), "¥" (JPY or CNY),
 * "kr" (SEK, NOK, DKK) and "Rs" (INR, PKR, LKR, NPR) name several, so alone they ground no currency.
 */
const CURRENCY_SYMBOLS: Record<string, string> = {
  '€': 'EUR',
  '£': 'GBP',
  '₹': 'INR',
  '₩': 'KRW',
  '₺': 'TRY',
  zł: 'PLN',
  Kč: 'CZK',
  US$: 'USD',
  'U.S.$': 'USD',
  C$: 'CAD',
  CA$: 'CAD',
  A$: 'AUD',
  AU$: 'AUD',
  NZ$: 'NZD',
  HK$: 'HKD',
  S$: 'SGD',
  R$: 'BRL',
  CHF: 'CHF',
  'Fr.': 'CHF',
  RM: 'MYR',
};
/** Marks that say "money" around an amount without naming one currency. */
const AMBIGUOUS_SYMBOLS = ['$', '¥', 'kr', 'Rs', 'Rs.'];

/** Every code and symbol read as a money mark. */
export const MONEY_MARKS: readonly string[] = [
  ...Object.keys(CURRENCY_SYMBOLS),
  ...AMBIGUOUS_SYMBOLS,
  ...CURRENCY_CODES,
];
const MONEY_MARK = new RegExp(
  [...MONEY_MARKS]
    .sort((a, b) => b.length - a.length)
    .map((s) => s.replace(/[.$]/g, '\\$&'))
    .join('|'),
);
/** The longest code or symbol parseCurrency reads ("U.S.$"): a longer text names no currency. */
const LONGEST_MARK = Math.max(3, ...Object.keys(CURRENCY_SYMBOLS).map((k) => k.length));
const LEADING_MARK = new RegExp(`^(?:${MONEY_MARK.source})\\s*`);
const TRAILING_MARK = new RegExp(`\\s*(?:${MONEY_MARK.source})$`);

/** Currencies written by name ("Euro", "EURO (EUR)"): each name names one. */
const CURRENCY_NAMES: Record<string, string> = {
  euro: 'EUR',
  euros: 'EUR',
  'us dollar': 'USD',
  'us dollars': 'USD',
  'pound sterling': 'GBP',
  'british pound': 'GBP',
  'swiss franc': 'CHF',
  'swiss francs': 'CHF',
  'schweizer franken': 'CHF',
  'franc suisse': 'CHF',
  'francs suisses': 'CHF',
};

/**
 * The currency an amount or a "Currency:" value names, or null when it names none or several.
 * A name, or a name or code with its code or symbol in parentheses ("EURO (EUR)", "EUR (€)"),
 * counts when both name the same currency.
 */
export function parseCurrency(text: string): string | null {
  const t = text.trim();
  const glossed = /^([^()]+?)\s*\(([^()]+)\)$/.exec(t);
  if (glossed?.[1] !== undefined && glossed[2] !== undefined) {
    const [a, b] = [parseCurrency(glossed[1]), parseCurrency(glossed[2])];
    return a !== null && a === b ? a : null;
  }
  // Own keys only: a page's "__proto__" or "constructor" is no currency name.
  const name = t.toLowerCase().replace(/\s+/g, ' ');
  if (Object.hasOwn(CURRENCY_NAMES, name)) return CURRENCY_NAMES[name] ?? null;
  if (t.length > LONGEST_MARK) return null;
  if (CURRENCY_CODES.has(t.toUpperCase()) && /^[A-Za-z]{3}$/.test(t)) return t.toUpperCase();
  if (Object.hasOwn(CURRENCY_SYMBOLS, t)) return CURRENCY_SYMBOLS[t] ?? null;
  // "EUR (€)", "Euro"? Only the plain forms are read; anything else is not grounded.
  return null;
}

/** Whether a text only names money: a currency (code, symbol, name) or a mark of several ("$", "kr"). */
export function isMoneyMark(text: string): boolean {
  const t = text.trim();
  return parseCurrency(t) !== null || AMBIGUOUS_SYMBOLS.includes(t);
}

const SPACES = /[\s\u00a0\u202f\u2009]/;

/** A signed amount: "1,234.50", "$1,234.50", "1.234,50 EUR", "(12.00)", "-12.00", "1 234,50 €". */
export function parseDecimal(text: string, hints: FormatHints = {}): number | null {
  let t = text.trim().replace(/\u2212/g, '-');
  let negative = false;
  if (/^\(.*\)$/.test(t)) {
    negative = true;
    t = t.slice(1, -1).trim();
  }
  if (t.startsWith('-')) {
    negative = !negative;
    t = t.slice(1).trim();
  }
  t = t.replace(LEADING_MARK, '').replace(TRAILING_MARK, '');
  if (t.startsWith('-') && !negative) {
    // "$-12.00", "EUR -12,00"
    negative = true;
    t = t.slice(1).trim();
  }
  const number = parseUnsigned(t, hints.decimalMark);
  if (number === null) return null;
  return negative && number !== 0 ? -number : number;
}

/** A whole number written without decimals other than zeros ("3", "1,200", "12.00"). */
export function parseInteger(text: string, hints: FormatHints = {}): number | null {
  const n = parseDecimal(text, hints);
  return n !== null && Number.isSafeInteger(n) ? n : null;
}

/**
 * Digits with at most one decimal mark and thousands separators in groups of three.
 * "1,234" and "1.234" are ambiguous (a thousand and two hundred, or one point two) unless
 * the document has shown its decimal mark elsewhere.
 */
function parseUnsigned(t: string, mark: DecimalMark | undefined): number | null {
  if (!/^[0-9][0-9.,'\s\u00a0\u202f\u2009]*$/.test(t) || !/[0-9]$/.test(t)) return null;
  const lastDot = t.lastIndexOf('.');
  const lastComma = t.lastIndexOf(',');
  let decimalMark: DecimalMark | null;
  if (lastDot >= 0 && lastComma >= 0) {
    decimalMark = lastDot > lastComma ? '.' : ',';
  } else if (lastDot >= 0 || lastComma >= 0) {
    const sep: DecimalMark = lastDot >= 0 ? '.' : ',';
    const count = t.split(sep).length - 1;
    const after = t.length - 1 - t.lastIndexOf(sep);
    const intPart = t.slice(0, t.indexOf(sep));
    if (count > 1) decimalMark = null;
    else if (after !== 3 || /^0+$/.test(intPart)) decimalMark = sep;
    else if (mark !== undefined) decimalMark = mark === sep ? sep : null;
    else return null; // "1,234": ambiguous without the document's decimal mark
  } else {
    decimalMark = null;
  }
  let intText = t;
  let fracText = '';
  if (decimalMark !== null) {
    const i = t.lastIndexOf(decimalMark);
    intText = t.slice(0, i);
    fracText = t.slice(i + 1);
    if (!/^[0-9]+$/.test(fracText)) return null;
  }
  const digits = groupedDigits(intText);
  if (digits === null) return null;
  return Number(fracText ? `${digits}.${fracText}` : digits);
}

/** "1,234,567", "1.234", "1 234", "1'234" or plain "1234" -> its digits; bad grouping -> null. */
function groupedDigits(t: string): string | null {
  if (/^[0-9]+$/.test(t)) return t;
  const seps = new Set(t.replace(/[0-9]/g, '').split(''));
  if (seps.size !== 1) return null;
  const [sep] = [...seps];
  if (sep === undefined) return null;
  const groups = t.split(sep);
  const [first, ...rest] = groups;
  if (first === undefined || !/^[0-9]{1,3}$/.test(first) || rest.some((g) => !/^[0-9]{3}$/.test(g))) return null;
  if (SPACES.test(sep) || sep === "'" || sep === '.' || sep === ',') return groups.join('');
  return null;
}

/** A checked and an empty box, in any language (the words for yes and no are the vocabulary's). */
const CHECKED = new Set(['☑', '☒', '✓', '✔', '[x]', '(x)', 'x']);
const UNCHECKED = new Set(['☐', '[ ]', '[]', '( )']);

/** yes/no, true/false (and their German, French, Spanish forms), a checked or empty box. */
export function parseBoolean(text: string): boolean | null {
  const t = text.trim().toLowerCase();
  if (YES_WORDS.has(t) || CHECKED.has(t)) return true;
  if (NO_WORDS.has(t) || UNCHECKED.has(t)) return false;
  return null;
}

/** A box drawn as a character before a label: "☑ Paid", "[x] Paid", "☐ Paid". */
export const BOX_PREFIX = /^(☑|☒|✓|✔|☐|\[[xX ]?\])\s*/;

const EMAIL = /^(?:mailto:)?([A-Za-z0-9._%+-]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)$/;

export function parseEmail(text: string): string | null {
  const m = EMAIL.exec(text.trim().replace(/[.,;]$/, ''));
  if (!m || m[1] === undefined || m[2] === undefined) return null;
  return `${m[1]}@${m[2].toLowerCase()}`;
}

/**
 * A phone number as written ("+49 30 1234 5678", "555-123-4567"), 7 to 15 digits. A form
 * that opens with "(" ("(555) 123-4567") is given as its digits, since the contract's phone
 * form starts with a digit or "+".
 */
export function parsePhone(text: string): string | null {
  const t = text.trim().replace(/\s+/g, ' ');
  if (!/^\+?[0-9(][0-9 ().\-/]*[0-9]$/.test(t)) return null;
  const digits = t.replace(/[^0-9]/g, '');
  if (digits.length < 7 || digits.length > 15) return null;
  if ((t.match(/\(/g) ?? []).length !== (t.match(/\)/g) ?? []).length) return null;
  if (/^\+?[0-9][0-9 ().-]*$/.test(t)) return t;
  return (t.startsWith('+') ? '+' : '') + digits;
}

/** A string value: trimmed, inner whitespace collapsed; nothing but punctuation is no value. */
export function parseString(text: string): string | null {
  const t = text.trim().replace(/\s+/g, ' ');
  return /[\p{L}\p{N}]/u.test(t) ? t : null;
}

/** The value of `text` as `type`, or null when it is not one beyond doubt. */
export function parseValue(type: LeafType, text: string, hints: FormatHints = {}): LeafValue {
  switch (type) {
    case 'string':
      return parseString(text);
    case 'decimal':
      return parseDecimal(text, hints);
    case 'integer':
      return parseInteger(text, hints);
    case 'date':
      return parseDate(text, hints.dateOrder);
    case 'boolean':
      return parseBoolean(text);
    case 'email':
      return parseEmail(text);
    case 'phone':
      return parsePhone(text);
    case 'currency':
      return parseCurrency(text);
  }
}

/** Whether `text` writes an amount with an explicit decimal part or a money mark ("12.50", "€ 3"). */
export function looksLikeAmount(text: string): boolean {
  return /[0-9][.,][0-9]{2}(?![0-9])/.test(text) || LEADING_MARK.test(text.trim()) || TRAILING_MARK.test(text.trim());
}

const AMOUNT_WITH_MARK = new RegExp(
  `(?<![\\p{L}$])(${MONEY_MARK.source})\\s?-?[0-9][0-9.,'\\s]*[0-9]|[0-9][0-9.,']*[0-9]\\s?(${MONEY_MARK.source})(?![\\p{L}])`,
  'gu',
);

/**
 * What every money mark holds: a symbol's character, three capitals (a code) or one of the
 * short lower-case marks. Most cells hold none, and skip AMOUNT_WITH_MARK's search (a tenth of
 * the grounding of a long invoice). test/engine/values.test.ts holds it to every mark.
 */
export const MAY_HOLD_MARK = /[€£₹₩₺¥$łč]|[A-Z]{3}|Fr\.|kr|Rs|RM/;

/**
 * The currencies that the money marks of a text's amounts name ("529,87 €", "USD 12.00"),
 * with "?" for a mark that names several ("$", "kr").
 */
export function currenciesOfAmounts(text: string): string[] {
  const out: string[] = [];
  if (!MAY_HOLD_MARK.test(text)) return out;
  for (const m of text.matchAll(AMOUNT_WITH_MARK)) {
    if (isTimeOfDay(text, m)) continue;
    const mark = m[1] ?? m[2] ?? '';
    out.push(CURRENCY_SYMBOLS[mark] ?? (CURRENCY_CODES.has(mark) ? mark : '?'));
  }
  return out;
}

/** A time of day ("08.30", "12:30") that a range or an hour's word follows: "Mo.-Fr. 08.30 - 12.30 Uhr". */
const TIME_THEN = /^\s*(?:[-–]\s*\d{1,2}[.:]\d{2}|(?:uhr|h|hrs|am|pm|bis|to|à)(?!\p{L}))/iu;

/**
 * Whether an amount with a mark is a time: the number is written as hours and minutes and
 * a range or an hour's word follows it ("Mo.-Fr. 08.30 - 12.30 Uhr" names no Swiss franc),
 * or a weekday's range ends in the mark ("Mo.-Fr.").
 */
function isTimeOfDay(text: string, m: RegExpMatchArray): boolean {
  const at = m.index ?? 0;
  const digits = /\d[\d.,:]*\d/.exec(m[0])?.[0] ?? '';
  if (/^\d{1,2}[.:]\d{2}$/.test(digits) && TIME_THEN.test(text.slice(at + m[0].length))) return true;
  return m[1] === 'Fr.' && /(?:^|[^\p{L}])(?:mo|di|mi|do|lu|ma|me|je|ve)\.?\s*[-–]\s*$/iu.test(text.slice(0, at));
}
