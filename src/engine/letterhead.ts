import type { Cell, Line, Page } from './layout.ts';
import type { Place } from './types.ts';

/**
 * The letterhead of a receipt or a form: the issuer's name and address printed at the top of
 * the first page with no label. The name is the first capitalised lines of the page; the address
 * the lines under it from the first line with a number (a street or a postcode) up to the first
 * line that is something else: a registration or tax id, a phone, a date, a document's title.
 * A letterhead that does not hold that shape gives nothing.
 */

type Read = { text: string; at: Place };
export type Letterhead = { name: Read | null; address: Read | null };

/** Lines of an address at most (a block longer than that is not a letterhead); a name has two at most. */
const MAX_ADDRESS_LINES = 6;
/** A street and a town at least: one line alone is a part of an address OCR read without the rest. */
const MIN_ADDRESS_LINES = 2;
/** The widest gap between two words of one line, in text heights (layout.ts's cells). */
const WORD_GAP_EM = 0.75;
/** How far down the page (in lines) the name may start: logos and stamps read as stray text come first. */
const MAX_LINES_BEFORE_NAME = 4;

/**
 * A line that ends a letterhead's address: an id (registration, tax), a phone, a mail or web
 * address, a document's title, a time.
 */
const STOP =
  /\b(?:gst|gstid|sst|vat|tax|tin|reg|regn|registration|co\.?\s*no|company\s*no|roc|brn|tel|telephone|phone|fax|h\/p|hp|mobile|e-?mail|www|http|invoice|receipt|bill|cashier|date|time|order)\b|@|\d{1,2}:\d{2}/i;
/** A company's registration number alone on its line, as receipts print it under the name: "(867388-U)", "1000131-K". */
const REGISTRATION = /^\(?\s*(?:co\.?\s*(?:reg|no)\.?\s*[:.]?\s*)?\d[\d\s]{3,}-\s*[A-Z]\s*\)?$/i;
/** The label of a company's registration or tax number. */
const ID_LABEL = /\b(?:gst|sst|vat|tin|reg|regn|registration|co\.?\s*no|company\s*no|roc|brn)\b/i;
/** A registration or tax number printed bare on its line, with no label or letter ("002105827328"): longer than a postcode. */
const BARE_ID = /^\(?\s*\d{7,}\s*\)?$/;
/** The same printed inside the name's line: "STATIONERY(001451637-M) & BOOKS", "SDN BHD (139386 X)". */
const REGISTRATION_IN_NAME = /\s*\(\s*\d[\d\s-]{3,}-?\s*[A-Z]\s*\)\s*/gi;
/** A date in any of the forms a receipt prints ("09/01/2019", "12 Mar 2018", "2018-01-05"). */
const DATE_LIKE = /\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}\s+[A-Za-z]{3,9}\.?\s+\d{4}\b/;
/** A phone number as printed ("07-355 2616", "03-40210276"). */
const PHONE = /\b0\d{1,2}-\s?\d{3,4}\s?\d{3,4}\b/;
/** What marks an address: a postcode (four to six digits standing alone). */
const POSTCODE = /(?<![\d./-])\d{4,6}(?![\d./-])/;
/**
 * Legal forms as a name ends with them, one list for the three patterns below: "SDN BHD", "S/B",
 * "LTD.". "SDN BHD" is also read run together ("SDNBHD").
 */
const FORMS = ['sdn\\.?\\s*bhd', 's\\/b', ...'bhd berhad ltd limited llc inc corp gmbh plc pte'.split(' ')];
const formsAnd = (...more: string[]): string => [...FORMS, ...more].join('|');

/** Company forms, and trades, that end a name: a second line after one of these is not the name's. */
const LEGAL_FORM = new RegExp(`\\b(?:${formsAnd('ag', 'sarl', 'sas', 'enterprise', 'trading')})\\.?$`, 'i');

/** A name's line that runs on to the next: it ends with "&", "AND", "OF" or a hyphen. */
const RUNS_ON = /(?:&|-|\band|\bof)$/i;
/** A line that ends with a legal form, its registration number aside. */
const FORM_AT_END = new RegExp(`\\b(?:${formsAnd()})\\.?(?:\\s*\\(\\s*\\d[\\d\\s-]*-?\\s*[A-Z]\\s*\\))?$`, 'i');

/** The words of legal forms and trades that a name ends with and never is alone. */
const FORM_WORDS = new Set(
  [
    'sdn',
    'bhd',
    'berhad',
    'ltd',
    'limited',
    'llc',
    'inc',
    'corp',
    'gmbh',
    'ag',
    'sarl',
    'sas',
    'plc',
    'pte',
    'co',
  ].concat(['enterprise', 'enterprises', 'trading', 'company', 'and', 'm']),
);

/** Legal forms as a name prints them, a closed list: "SDN", "BHD.", "(M)", "CO.". */
const LEGAL_FORM_WORD = new RegExp(`^(?:${formsAnd('sdn', 'co')})\\.?$|^\\((?:m|s)\\)$`, 'i');

/**
 * Whether an OCR word is a legal form, spelt exactly: a word of a closed list read whole is no
 * guess, as a misread of one ("3HD", "HD.") is no word of it, so OCR's low confidence in it
 * (small print, a bold face) is no doubt about the name it ends.
 */
export const isLegalFormWord = (text: string): boolean => LEGAL_FORM_WORD.test(text);

const wordsOf = (text: string): string[] =>
  text
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .filter((w) => w !== '');

const textOf = (line: Line): string => line.cells.map((c) => c.text).join(' ');

/** A document's title or a kind of sale printed above the name ("Cash Sale", "Official Receipt"). */
const TITLE_WORDS = new Set(
  ['cash', 'sale', 'sales', 'credit', 'tax', 'invoice', 'receipt', 'bill', 'official', 'simplified', 'copy'].concat([
    'customer',
    'duplicate',
    'reprint',
  ]),
);

/**
 * A line that is a name: letters and no comma (an address's), no digit unless the line ends with
 * a legal form ("99 SPEED MART S/B": a street or a postcode never does), every word of it
 * capitalised (or a sign), no stop word, not a title. Its registration number and stray marks at
 * its ends are not its words (nameOf).
 */
function isNameLine(line: Line): boolean {
  const text = textOf(nameOf(line));
  if (text.includes(',') || (/\d/.test(text) && !FORM_AT_END.test(text))) return false;
  if (wordsOf(text).every((w) => TITLE_WORDS.has(w))) return false;
  const letters = text.replace(/[^\p{L}]/gu, '');
  if (letters.length < 3 || letters.length < text.replace(/\s/g, '').length / 2) return false;
  if (STOP.test(text) || DATE_LIKE.test(text) || PHONE.test(text) || REGISTRATION.test(text)) return false;
  return text.split(/\s+/).every((w) => !/^\p{Ll}/u.test(w));
}

const isStopLine = (line: Line): boolean => {
  const text = textOf(line);
  return STOP.test(text) || DATE_LIKE.test(text) || PHONE.test(text) || REGISTRATION.test(text) || BARE_ID.test(text);
};

/** A cell with no letter or digit: a mark OCR read off a smudge, a rule or a logo's edge. */
const isMark = (cell: Cell): boolean => !/[\p{L}\d]/u.test(cell.text);

/**
 * A name's line as the name's own words, each where the page prints it: a registration number
 * printed in it ("(867388-U)") and stray marks at its ends (", Yam Fresh") left out, so that
 * neither is read into the name nor a scan's doubt about them taken for a doubt about the name.
 */
function nameOf(line: Line): Line {
  const cells: Cell[] = [];
  for (const cell of line.cells) {
    const per = (cell.x1 - cell.x0) / Math.max(1, cell.text.length);
    const piece = (from: number, to: number) => {
      const part = cell.text.slice(from, to);
      const text = part.trim();
      if (text === '') return;
      const lead = part.length - part.trimStart().length;
      const x0 = cell.x0 + per * (from + lead);
      cells.push({ text, x0, x1: x0 + per * text.length });
    };
    let from = 0;
    for (const m of cell.text.matchAll(REGISTRATION_IN_NAME)) {
      piece(from, m.index);
      from = m.index + m[0].length;
    }
    piece(from, cell.text.length);
  }
  while (cells[0] && isMark(cells[0])) cells.shift();
  while (cells.at(-1) && isMark(cells.at(-1) as Cell)) cells.pop();
  return { ...line, cells };
}

/** Stray marks: fewer than three letters, or more signs than letters, or a word in lower case; or a title. */
function isStray(line: Line): boolean {
  const text = textOf(line);
  const letters = text.replace(/[^\p{L}]/gu, '').length;
  if (letters < 3 || letters < text.replace(/\s/g, '').length / 2) return true;
  return /(?:^|\s)\p{Ll}/u.test(text) || wordsOf(text).every((w) => TITLE_WORDS.has(w));
}

/**
 * A skewed scan's printed line that OCR read as two, one a little above the other ("INTERNATIONAL
 * SDN BHD" over "UNIHAKKA", its start): neighbours that overlap and stand side by side, no more than
 * a word's gap apart, are one line read left to right. Lines that overlap otherwise stay apart.
 */
function joinSkewed(lines: readonly Line[]): Line[] {
  const out: Line[] = [];
  for (const line of lines) {
    const above = out.at(-1);
    if (above && overlaps(above, line) && sideBySide(above, line)) {
      const cells = [...above.cells, ...line.cells].sort((a, b) => a.x0 - b.x0);
      out[out.length - 1] = {
        ...above,
        y: Math.max(above.y, line.y),
        height: Math.max(above.height, line.height),
        cells,
      };
    } else out.push(line);
  }
  return out;
}

/** Whether one line's cells all end left of the other's, with less than a word's gap between them. */
function sideBySide(a: Line, b: Line): boolean {
  const span = (l: Line) => [Math.min(...l.cells.map((c) => c.x0)), Math.max(...l.cells.map((c) => c.x1))] as const;
  const [a0, a1] = span(a);
  const [b0, b1] = span(b);
  const gap = a0 < b0 ? b0 - a1 : a0 - b1;
  return gap >= 0 && gap < WORD_GAP_EM * Math.max(a.height, b.height);
}

/** Whether any two neighbours of lines from..to (the line at `to` included) overlap. */
function overlapIn(lines: readonly Line[], from: number, to: number): boolean {
  for (let i = from + 1; i <= to && i < lines.length; i++)
    if (overlaps(lines[i - 1] as Line, lines[i] as Line)) return true;
  return false;
}

/** Baselines closer than half the smaller line's height: a large name over small print is not an overlap. */
function overlaps(above: Line, below: Line): boolean {
  return below.y - above.y < 0.5 * Math.min(above.height, below.height);
}

/** Lines of one block: each starts within two of its lines' heights of the one above. */
function follows(above: Line, below: Line): boolean {
  return below.y - above.y <= 2.2 * Math.max(above.height, below.height);
}

export function readLetterhead(page: Page | undefined): Letterhead {
  const none: Letterhead = { name: null, address: null };
  if (!page) return none;
  const lines = joinSkewed(page.lines);
  // Above the name only stray marks (a logo, a stamp, a handwritten note) and a title: a line of
  // words that is not a name (an address, a number) means the name is not where a letterhead has it.
  const start = lines.findIndex((l, i) => i < MAX_LINES_BEFORE_NAME && isNameLine(l));
  if (start < 0 || lines.slice(0, start).some((l) => !isStray(l))) return none;
  const first = lines[start] as Line;
  // A name is not its legal form alone: "TRADING SDN BHD" read above the rest of the name is a
  // layout OCR did not read in order, and the letterhead is not read.
  if (wordsOf(textOf(first)).every((w) => FORM_WORDS.has(w))) return none;
  const nameLines = [first];
  const second = lines[start + 1];
  if (
    second &&
    !LEGAL_FORM.test(textOf(first)) &&
    isNameLine(second) &&
    follows(first, second) &&
    Math.abs(second.height - first.height) <= 0.2 * first.height &&
    !/\d/.test(textOf(second))
  ) {
    // Two lines of a name's shape are one name when the first runs on ("HARDWARE &") or the
    // second ends it with its legal form ("CO. (M) SDN BHD"); otherwise the second may as well be
    // a place or a branch ("AUTOROUTE RABAT MEKNES" under "RELAIS TOTAL OULMES"): no name is read.
    if (!RUNS_ON.test(textOf(first)) && !FORM_AT_END.test(textOf(second))) return none;
    nameLines.push(second);
  }
  // Lines that overlap but are not side by side (joinSkewed joins those) are a skewed scan whose
  // lines OCR did not read in order (a name's second line read above its first, half a line
  // higher): the name is not read when its lines or the line under them overlap; the address the same by its own lines (a skew lower down is not the name's).
  if (overlapIn(lines, start, start + nameLines.length)) return none;
  const name = readOf(nameLines.map(nameOf));
  // One word alone is as often a street's ("JALAN") or a word of a logo as a name.
  if (name && !name.text.includes(' ')) return none;
  return { name, address: addressUnder(lines, start + nameLines.length) };
}

/** The address: from the first line with a number under the name, to the line before the next stop line. */
function addressUnder(lines: readonly Line[], from: number): Read | null {
  let i = from;
  // Between the name and the address: its registration or tax number, labelled or not ("(CO.REG
  // :860671-D)*", "(GST Reg No. 001492992000)"), a former name, a licence. A line that runs on
  // with a comma is the address's own ("No.l," misread without its number), never skipped.
  const between = (text: string) =>
    REGISTRATION.test(text) ||
    BARE_ID.test(text) ||
    (!/\d/.test(text) && !/,$/.test(text)) ||
    (ID_LABEL.test(text) && !PHONE.test(text));
  while (i < lines.length && i < from + 5 && between(textOf(lines[i] as Line))) i++;
  const block: Line[] = [];
  for (; i < lines.length && !isStopLine(lines[i] as Line); i++) {
    const line = lines[i] as Line;
    const last = block.at(-1);
    if (last && !follows(last, line)) break;
    block.push(line);
  }
  if (block.length < MIN_ADDRESS_LINES || block.length > MAX_ADDRESS_LINES) return null;
  if (overlapIn(lines, from - 1, i)) return null;
  if (!/\d/.test(textOf(block[0] as Line)) || !block.some((l) => POSTCODE.test(textOf(l)))) return null;
  return readOf(block);
}

function readOf(lines: readonly Line[]): Read | null {
  const [first] = lines;
  if (!first) return null;
  let x0 = Infinity;
  let x1 = -Infinity;
  for (const l of lines) {
    x0 = Math.min(x0, ...l.cells.map((c) => c.x0));
    x1 = Math.max(x1, ...l.cells.map((c) => c.x1));
  }
  const last = lines.at(-1) as Line;
  return {
    text: lines.map(textOf).join(' ').replace(/\s+/g, ' ').trim(),
    at: { page: first.page, box: [x0, first.y - first.height, x1, last.y + 0.25 * last.height] },
  };
}
