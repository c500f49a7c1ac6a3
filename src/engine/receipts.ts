import type { FieldDefinition, LeafField, Results } from '../contract/index.ts';
import { nameWords } from './words.ts';
import type { Layout, Line } from './layout.ts';
import { readLetterhead } from './letterhead.ts';
import { dateOrder, loneDate } from './receipt-dates.ts';
import { placeOfCell, placeOfPart } from './receipt-places.ts';
import type { Grounding, Place } from './types.ts';
import type { FormatHints } from './values.ts';

/**
 * Receipts and forms read with any Field definition: what a reader finds with no label
 * before it. Each rule fills only a top-level field whose name says what it is and that the
 * labelled grounding left null, except the total, which a receipt's amount payable decides:
 * - a field named for the issuer (company, merchant, store, shop, vendor, seller) is the name in
 *   the letterhead, and `address` the address under it (letterhead.ts);
 * - a date field is the document's date when the page prints one date and no other;
 * - a total is the amount payable: "ROUNDED TOTAL", "NETT TOTAL", "GRAND TOTAL", "TOTAL RM" after
 *   a rounding line, else the one plain "TOTAL"; never a tax summary's row, a points balance,
 *   the cash tendered or the change.
 * A field with no rule stays as the grounding left it.
 */

const ISSUER = new Set(['company', 'merchant', 'store', 'shop', 'vendor', 'seller', 'issuer', 'business', 'retailer']);
/** Words that may stand beside the issuer's in the name of the same field ("company_name", "store_legal_name"). */
const NAME_WORDS = new Set(['name', 'legal', 'trading']);
const DATE_WORDS = new Set(['receipt', 'transaction', 'purchase', 'sale', 'sales', 'document', 'issue', 'bill']);
const TOTAL_WORDS = new Set(['total', 'grand', 'amount', 'payable', 'paid', 'receipt']);

export type Role = 'issuer' | 'address' | 'date' | 'total';

function roleOf(field: LeafField): Role | undefined {
  const words = nameWords(field.name);
  const only = (allowed: Set<string>, key: string) =>
    words.includes(key) && words.every((w) => w === key || allowed.has(w));
  if (field.type === 'string') {
    if (words.some((w) => ISSUER.has(w)) && words.every((w) => ISSUER.has(w) || NAME_WORDS.has(w))) return 'issuer';
    if (only(ISSUER, 'address')) return 'address';
  }
  if (field.type === 'date' && only(DATE_WORDS, 'date')) return 'date';
  if (
    field.type === 'decimal' &&
    words.some((w) => w === 'total' || w === 'amount') &&
    words.every((w) => TOTAL_WORDS.has(w))
  )
    return 'total';
  return undefined;
}

/**
 * The top-level fields these rules read, by name, with what each is: the issuer, its address,
 * the date or the total.
 */
export function receiptRoles(fields: FieldDefinition): Map<string, Role> {
  const out = new Map<string, Role>();
  for (const field of fields) {
    if (field.type === 'object' || field.type === 'table') continue;
    const role = roleOf(field);
    if (role) out.set(field.name, role);
  }
  return out;
}

/**
 * Fills what the rules above find into `results` and `grounding`; returns the paths whose value
 * no label vouches for (a scan's reading of them must be surer, scan.ts), and those the page's
 * arithmetic vouches for: a total equal to the cash handed over less the change. A misread digit
 * would not agree with two other amounts to the cent, so a scan's doubt about its words is lifted.
 */
export function readReceipt(
  fields: FieldDefinition,
  layout: Layout,
  hints: FormatHints,
  results: Results,
  grounding: Grounding,
  scanned: boolean,
): { unlabelled: string[]; vouched: string[] } {
  const unlabelled: string[] = [];
  const vouched: string[] = [];
  let letterhead: ReturnType<typeof readLetterhead> | undefined;
  for (const field of fields) {
    if (field.type === 'object' || field.type === 'table') continue;
    const role = roleOf(field);
    if (role === undefined) continue;
    if (role === 'total') {
      const { payable, notPayable, tendered, largestItem, till } = readTotals(layout);
      // An invoice's total is its labels' (grounding.ts); these rules are a till's.
      if (!till) continue;
      if (notPayable(grounding[field.name])) unset(field.name);
      const given = results[field.name];
      // A label's value that the till's own total line contradicts (a "Total RM" column heading
      // read with the first item under it) is not trusted over it: the two disagree, so neither is given.
      if (payable && typeof given === 'number' && !payable.final && Math.abs(given - payable.amount) >= 0.005)
        unset(field.name);
      else if (payable && (typeof given !== 'number' || payable.final)) set(field.name, payable.amount, payable.at);
      // A till prints its total beside its label: a label's value on a line with no word of a
      // total is a column's ("Total RM" over the items, read with the first item under it).
      else if (!payable && typeof given === 'number' && !besideTotalWord(layout, grounding[field.name]))
        unset(field.name);
      // The cash handed over less the change is what was paid, and no item costs more than the
      // whole: a total that disagrees is misread.
      const total = results[field.name];
      if (typeof total === 'number' && tendered !== undefined && Math.abs(total - tendered) >= 0.005) unset(field.name);
      // (Unless the cash and change vouch for it: an item's price before its discount may exceed it.)
      const paid = tendered !== undefined && typeof total === 'number' && Math.abs(total - tendered) < 0.005;
      if (typeof total === 'number' && total < largestItem - 0.005 && !paid) unset(field.name);
      else if (paid) vouched.push(field.name);
      continue;
    }
    // On a scan, dates that only read month first on a page whose money is a day-first country's
    // are OCR's misreads. A text layer's digits are what was printed: its labelled date stands (an
    // English invoice in euros may well write the month first), and only no lone date is taken.
    const order = role === 'date' ? dateOrder(layout, hints) : undefined;
    if (order === 'contradicted' && scanned) unset(field.name);
    if (results[field.name] !== null && results[field.name] !== undefined) continue;
    if (role === 'date') {
      const date = order === 'contradicted' ? undefined : loneDate(layout, order);
      if (date) {
        set(field.name, date.iso, date.at);
        unlabelled.push(field.name);
      }
      continue;
    }
    letterhead ??= readLetterhead(layout.pages[0]);
    const read = role === 'issuer' ? letterhead.name : letterhead.address;
    if (read) {
      set(field.name, read.text, read.at);
      unlabelled.push(field.name);
    }
  }
  return { unlabelled, vouched };

  function set(name: string, value: string | number, at: Place): void {
    results[name] = value;
    grounding[name] = at;
  }
  function unset(name: string): void {
    results[name] = null;
    delete grounding[name];
  }
}

/** An amount at the end of a line: "15.90", "RM 9.90", "$8.20", "1,234.50", "9.90 SR" (a tax code after it). */
const LAST_AMOUNT = /(?:^|[\s:|])(?:RM|MYR|S?\$)?\s?(\d{1,3}(?:,\d{3})*\.\d{2})(?:\s*[A-Z]{2,3}|\s+[A-Za-z]{1,2})?\s*$/;
const AMOUNTS = /\d\.\d{2}(?!\d)/g;
/** Amounts as a list of items prints them, for the largest. */
const ITEM_AMOUNTS = /(?<![\d.,])\d{1,3}(?:,\d{3})*\.\d{2}(?![\d.])/g;
/** Words that make a labelled total another amount than the one payable. */
const NOT_PAYABLE = new Set([
  'sub',
  'subtotal',
  'excl',
  'excluding',
  'exclusive',
  'before',
  'qty',
  'quantity',
  'items',
  'item',
  'savings',
  'saving',
  'saved',
  'discount',
  'points',
  'point',
  'balance',
  'change',
  'cash',
  'tendered',
  'tender',
  'received',
  'accepted',
  'payment',
  'rounding',
  'adj',
  'adjustment',
  'service',
  'deposit',
  'card',
  'gst',
  'tax',
  'vat',
  'sst',
]);
const INCLUSIVE = new Set(['incl', 'inclusive', 'including', 'inc']);
/** A total after rounding or everything else: what is paid. */
const FINAL = new Set(['rounded', 'nett', 'grand', 'payable']);

/** rounded: a rounding is printed under it, so it is the amount before rounding. */
type Labelled = { amount: number; at: Place; final: boolean; rounded?: boolean };

/** The first words of a till's lines of payment. */
const TILL = new Set(['cash', 'change', 'tendered', 'rounding', 'rounded']);

/** Words of a line whose amount is never the one payable, whatever its label says. */
const NEVER_PAYABLE = new Set([
  'balance',
  'points',
  'point',
  'change',
  'cash',
  'tendered',
  'tender',
  'received',
  'accepted',
]);

/**
 * The amount payable: the final totals when they agree and none is below a plain total (an
 * invoice's "Net total" is below its total, a receipt's "Nett total" never), else the plain
 * totals when they agree. Lines under a tax summary's heading and rows of several amounts are
 * not totals of the receipt. `notPayable`: whether a place is on a line that cannot hold the
 * amount payable (under a tax summary's heading, a balance, the change, the cash tendered).
 */
function readTotals(layout: Layout): {
  payable: Labelled | undefined;
  notPayable: (place: Place | undefined) => boolean;
  /** Cash less change, when the page prints each once. */
  tendered: number | undefined;
  /** The largest amount above the first line that says "total": an item's price or amount. */
  largestItem: number;
  /** Whether the page is a till's: it prints the cash, the change or a rounding, each with an amount. */
  till: boolean;
} {
  let till = false;
  let largestItem = 0;
  let items = true;
  const found: Labelled[] = [];
  const cash: number[] = [];
  const change: number[] = [];
  const never: Line[] = [];
  const summaryFrom = new Map<number, number>();
  for (const page of layout.pages) {
    let previous = '';
    for (const line of page.lines) {
      // OCR sets a space after a decimal point ("RM 65. 20") and reads a rule's edge as "|".
      const text = line.cells
        .map((c) => c.text)
        .join(' ')
        .replace(/(\d)\. (\d{2})(?!\d)/g, '$1.$2')
        .replace(/[\s|]+$/, '');
      const words = wordsOf(text);
      // A tax summary is the receipt's last table: nothing under its heading is the receipt's total.
      if (words.includes('summary')) {
        summaryFrom.set(page.number, line.y - line.height);
        break;
      }
      if (words.some((w) => w.includes('total'))) items = false;
      // A rounding of a few cents under a total: that total is not what was paid.
      if (words.some((w) => w === 'rounding' || w === 'round') && /[1-9]/.test(text.replace(/^\D*/, '')))
        for (const f of found) f.rounded = true;
      if (items)
        for (const a of text.matchAll(ITEM_AMOUNTS))
          largestItem = Math.max(largestItem, Number(a[0].replace(/,/g, '')));
      if (words.some((w) => NEVER_PAYABLE.has(w))) never.push(line);
      const amount = loneAmount(text);
      // Some tills print the cash handed over as a payment taken off the total: "Cash -50.00".
      const handed = amount ?? loneAmount(text.replace(/\s-(?=\d[\d,]*\.\d{2}$)/, ' '));
      // ("Change 0.50 RM": a currency or tax code may follow the amount.)
      if (TILL.has(words[0] ?? '') && (/\d[.,]\d{2}$/.test(text) || amount !== undefined)) till = true;
      // "CASH", "CASH RM": the cash handed over, not "Cash Sales" nor "Cash Rounding".
      if (handed !== undefined && words[0] === 'cash' && words.slice(1).every((w) => w === 'rm' || w === 'myr'))
        cash.push(handed);
      if (amount !== undefined && words[0] === 'change' && words.length <= 2) change.push(amount);
      const labelled = totalOf(line, text, words, previous);
      if (labelled) found.push(labelled);
      previous = text;
    }
  }
  const notPayable = (place: Place | undefined): boolean => {
    if (!place) return false;
    const [, top, , bottom] = place.box;
    const middle = (top + bottom) / 2;
    const from = summaryFrom.get(place.page);
    if (from !== undefined && middle >= from) return true;
    return never.some((l) => l.page === place.page && middle >= l.y - l.height && middle <= l.y + 0.25 * l.height);
  };
  const plain = found.filter((f) => !f.final && !f.rounded);
  const final = found.filter((f) => f.final);
  const agreed = (list: Labelled[]) =>
    list.length > 0 && list.every((f) => Math.abs(f.amount - (list[0] as Labelled).amount) < 0.005)
      ? list[0]
      : undefined;
  const tendered = cash.length === 1 && change.length === 1 ? (cash[0] as number) - (change[0] as number) : undefined;
  // Totals that disagree (a rounding OCR misread, so the total before it is not known as such):
  // the one the cash paid less the change equals is what was paid.
  const paid = (list: Labelled[]) =>
    agreed(list) ??
    (tendered === undefined ? undefined : agreed(list.filter((f) => Math.abs(f.amount - tendered) < 0.005)));
  const last = paid(final);
  if (last && plain.every((p) => last.amount >= p.amount - 0.1))
    return { payable: last, notPayable, tendered, largestItem, till };
  return { payable: final.length === 0 ? paid(plain) : undefined, notPayable, tendered, largestItem, till };
}

/** The one amount a line ends with, when it holds no other. */
function loneAmount(text: string): number | undefined {
  const m = LAST_AMOUNT.exec(text);
  if (!m?.[1] || (text.match(AMOUNTS)?.length ?? 0) > 1) return undefined;
  return Number(m[1].replace(/,/g, ''));
}

function totalOf(line: Line, text: string, words: string[], previous: string): Labelled | undefined {
  const m = LAST_AMOUNT.exec(text);
  const amount = loneAmount(text);
  if (!m || amount === undefined) return undefined;
  const label = wordsOf(text.slice(0, m.index));
  if (!label.includes('total') && !label.includes('payable')) return undefined;
  const inclusive = label.some((w) => INCLUSIVE.has(w));
  // A rate before the tax is named ("Total 6% supplies") is a part of the sales taxed at that
  // rate; after "incl." ("Total Incl. GST @6%") it is the rate of the tax included.
  const head = text.slice(0, m.index);
  const rate = head.indexOf('%');
  const included = /\binc/i.exec(head)?.index;
  if (rate >= 0 && !(inclusive && included !== undefined && rate > included)) return undefined;
  // "Total After Adj": the total after its rounding adjustment, what is paid.
  const adjusted = label.includes('after');
  const allowed = (w: string) =>
    (inclusive && (w === 'gst' || w === 'tax' || w === 'vat' || w === 'sst')) ||
    (adjusted && (w === 'adj' || w === 'adjustment' || w === 'rounding'));
  if (label.some((w) => NOT_PAYABLE.has(w) && !allowed(w))) return undefined;
  const afterRounding = wordsOf(previous).some((w) => w === 'rounding' || w === 'round');
  // The amount's own characters, not a tax code or a mark beside it, are what a scan's doubt is checked on.
  const at = placeOfAmount(line, m[1] as string);
  return { amount, at, final: words.some((w) => FINAL.has(w)) || afterRounding || adjusted };
}

/** Words, with those OCR ran together split where the case turns ("NettTotal"). */
const wordsOf = (text: string): string[] =>
  text
    .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .filter((w) => w !== '');

/**
 * The place of an amount's own characters on its line, as OCR printed them ("65. 20" for 65.20):
 * not a currency or a tax code beside it, whose doubt is not the amount's.
 */
function placeOfAmount(line: Line, amount: string): Place {
  const printed = new RegExp(`${amount.replace('.', '\\.\\s?')}(?!\\d)`, 'g');
  for (const cell of [...line.cells].reverse()) {
    const found = [...cell.text.matchAll(printed)].at(-1);
    if (found) return placeOfPart(line, cell, found.index, found.index + found[0].length);
  }
  const last = line.cells.at(-1);
  return last ? placeOfCell(line, last) : { page: line.page, box: [0, 0, 0, 0] };
}

/** Words that name a till's total on its own line ("TOTAL", "Amount Due", "JUMLAH"). */
const TOTAL_LINE_WORDS = new Set([
  'total',
  'totals',
  'payable',
  'due',
  'amount',
  'amt',
  'nett',
  'net',
  'grand',
  'jumlah',
]);

/** Whether the line a place stands on names a total before it. */
function besideTotalWord(layout: Layout, at: Place | undefined): boolean {
  if (!at) return false;
  const [x0, top, , bottom] = at.box;
  const middle = (top + bottom) / 2;
  const page = layout.pages.find((p) => p.number === at.page);
  const line = page?.lines.find((l) => middle >= l.y - l.height && middle <= l.y + 0.25 * l.height);
  if (!line) return false;
  const before = line.cells
    .filter((c) => c.x0 < x0)
    .map((c) => c.text)
    .join(' ');
  return wordsOf(before).some((w) => TOTAL_LINE_WORDS.has(w));
}
