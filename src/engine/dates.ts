/**
 * Dates as documents write them, into ISO YYYY-MM-DD. Two-digit years are refused
 * ("03/04/05" could be any of three dates), and so is "03/04/2024" unless the document
 * has shown elsewhere whether it writes the day or the month first.
 */

/** Day-first (15/03/2024) or month-first (03/15/2024), learned from the document. */
export type DateOrder = 'dmy' | 'mdy';

/** Month names of English, German, French, Spanish, Italian, Dutch and Portuguese, with common abbreviations. */
const MONTHS: Record<string, number> = {};
const NAMES: string[][] = [
  ['january', 'jan', 'januar', 'jänner', 'janvier', 'janv', 'enero', 'ene', 'gennaio', 'gen', 'januari', 'janeiro'],
  [
    'february',
    'feb',
    'februar',
    'février',
    'fevrier',
    'févr',
    'fevr',
    'febrero',
    'febbraio',
    'februari',
    'fevereiro',
    'fev',
  ],
  ['march', 'mar', 'märz', 'maerz', 'mär', 'mars', 'marzo', 'maart', 'mrt', 'março', 'marco'],
  ['april', 'apr', 'avril', 'avr', 'abril', 'abr', 'aprile'],
  ['may', 'mai', 'mayo', 'maggio', 'mag', 'mei', 'maio'],
  ['june', 'jun', 'juni', 'juin', 'junio', 'giugno', 'giu', 'junho'],
  ['july', 'jul', 'juli', 'juillet', 'juil', 'julio', 'luglio', 'lug', 'julho'],
  ['august', 'aug', 'août', 'aout', 'agosto', 'ago', 'augustus'],
  ['september', 'sep', 'sept', 'septembre', 'septiembre', 'settembre', 'set', 'setembro'],
  ['october', 'oct', 'oktober', 'okt', 'octobre', 'octubre', 'ottobre', 'ott', 'outubro', 'out'],
  ['november', 'nov', 'novembre', 'noviembre', 'novembro'],
  ['december', 'dec', 'dezember', 'dez', 'décembre', 'decembre', 'déc', 'diciembre', 'dic', 'dicembre', 'dezembro'],
];
for (const [i, names] of NAMES.entries()) for (const n of names) MONTHS[n] = i + 1;

/** An English month's name as a till prints it ("MAR", "Apr.", "December"), spelt exactly. */
const PRINTED_MONTH =
  /^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december)\.?,?$/i;

export const isPrintedMonth = (text: string): boolean => PRINTED_MONTH.test(text);

const WEEKDAY = /^(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|sday|urday)?\.?,?\s+/i;

function iso(year: number, month: number, day: number): string | null {
  if (year < 1000 || year > 9999 || month < 1 || month > 12 || day < 1) return null;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > days) return null;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function monthOf(word: string): number | undefined {
  return MONTHS[word.toLowerCase().replace(/\.$/, '')];
}

/** The ISO date `text` writes, or null when it writes none or is ambiguous. */
export function parseDate(text: string, order?: DateOrder): string | null {
  // "August 3 , 2014": a space before the comma, as some generators set it.
  const t = text.trim().replace(WEEKDAY, '').replace(/\s+/g, ' ').replace(/ ,/g, ',');
  let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(t);
  if (m) return iso(Number(m[1]), Number(m[2]), Number(m[3]));

  // 15.03.2024 is day-first wherever it is written.
  m = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(t);
  if (m) return iso(Number(m[3]), Number(m[2]), Number(m[1]));

  m = /^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$/.exec(t);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const year = Number(m[3]);
    if (a === b) return iso(year, a, b);
    if (a > 12 && b <= 12) return iso(year, b, a);
    if (b > 12 && a <= 12) return iso(year, a, b);
    if (a > 12 || b > 12) return null;
    if (order === 'dmy') return iso(year, b, a);
    if (order === 'mdy') return iso(year, a, b);
    return null;
  }

  // 4 Mar 2025, 4. März 2025, 7. Mai 2014, 4th March 2025, 4-Mar-2025, 15 de marzo de 2024
  m = /^(\d{1,2})(?:\.|st|nd|rd|th)?[\s-](?:de\s)?([\p{L}]+\.?)[\s-](?:de\s)?(\d{4})$/u.exec(t);
  if (m && m[2] !== undefined) {
    const month = monthOf(m[2]);
    return month === undefined ? null : iso(Number(m[3]), month, Number(m[1]));
  }

  // March 4, 2025; Mar. 4 2025; March 4th, 2025
  m = /^([\p{L}]+\.?) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$/u.exec(t);
  if (m && m[1] !== undefined) {
    const month = monthOf(m[1]);
    return month === undefined ? null : iso(Number(m[3]), month, Number(m[2]));
  }
  return null;
}

/**
 * What a date string says about the order of day and month: "15/03/2024" says day-first,
 * "03/15/2024" month-first, "03/04/2024" nothing.
 */
export function dateOrderOf(text: string): DateOrder | undefined {
  const m = /^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$/.exec(text.trim());
  if (!m) return undefined;
  const a = Number(m[1]);
  const b = Number(m[2]);
  if (a > 12 && b <= 12) return 'dmy';
  if (b > 12 && a <= 12) return 'mdy';
  return undefined;
}
