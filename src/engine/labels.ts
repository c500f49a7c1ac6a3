import type { FieldDefinition } from '../contract/index.ts';
import { type LabelForm, type LabelForms, type Tier, formsOf } from './label-forms.ts';
import { labelText, namesCurrencyOfAmount } from './label-text.ts';
import type { FieldPath } from './types.ts';
import { BOX_PREFIX } from './values.ts';
import { type Concept, PARTY_CONCEPTS } from './vocabulary/index.ts';
import { NUMBER_WORDS, POINTING } from './vocabulary/role-words.ts';

import { SPLIT_WORD_MIN, type Token, indexWord, tokens, wordsEqual } from './words.ts';

// The words of a field's name, read by receipts' rules through this module as before the words had their own.

/**
 * How a field is recognised in a document: its `label`, its `aliases` and the words of its
 * name, compared word by word without regard to case, accents or the punctuation between
 * words. "Number" also matches "No", "No.", "Nr", "Num" and "#", so `invoice_number` finds
 * "Invoice Number", "Invoice No.", "Invoice #" and "Invoice no:".
 *
 * Every label of the whole definition competes for each cell and the longest wins, so
 * "Invoice Date" is never read as the label "Invoice" followed by the value "Date", and
 * "Subtotal" never as "Total".
 *
 * The built-in vocabularies (vocabulary/) add the labels of six languages: to the fields
 * whose name stands for a concept (`total`, `invoice_date`, ...), and, for every concept,
 * as labels that name something else ("Lieferdatum" is no invoice date), so they compete
 * too. Each owner of a label has a tier: 0 for the field's own label and aliases, 1 for
 * the words of its name and the vocabulary, 2 for fallback labels ("Amount Due" for a
 * total). Grounding takes the best tier that finds anything.
 */

export type LabelMatch = {
  /** Fields the label names (a label such as "Name" can name a field of several objects). */
  owners: ReadonlySet<FieldPath>;
  /** The tier of each owner. */
  tiers: ReadonlyMap<FieldPath, Tier>;
  /** The vocabulary's concepts the label names ("Lieferdatum": delivery_date). */
  concepts: ReadonlySet<Concept>;
  /** The vocabulary's rank of the label for each of its concepts: 1 its own label, 2 a fallback ("Zahlbetrag" for a total). */
  ranks: ReadonlyMap<Concept, 1 | 2>;
  /**
   * Words between the label and its colon or the cell's end that are not part of any label
   * ("Total for this invoice", "Date of delivery"): the label is extended, and weaker.
   */
  extra?: string;
  /** Number of words of the label: longer labels are more specific. */
  size: number;
  /**
   * clean: the label stands alone, ends in ":" ("Total: 12.50") or ends in a number word
   * ("Invoice No. 4711"); loose: words follow it without a colon ("Total 12.50"), so they
   * are a value only if they parse as one.
   */
  kind: 'clean' | 'loose';
  /** What follows the label in the same cell, trimmed; empty when nothing does. */
  rest: string;
  /** The label ended with a colon: a value is announced. */
  colon: boolean;
  /** A box drawn before the label ("[x] Paid"), as written. */
  box?: string;
  /** The label is a document's title ("Invoice", "Rechnung"). */
  title?: boolean;
};

/** The best rank each concept has among labels of the same words. */
function bestRanks(matches: readonly LabelMatch[]): Map<Concept, 1 | 2> {
  const out = new Map<Concept, 1 | 2>();
  for (const m of matches) for (const [c, r] of m.ranks) if (r < (out.get(c) ?? 3)) out.set(c, r);
  return out;
}

/** Matches of the same length merged: the first's place in the text, and every one's fields, concepts and ranks. */
function merged(longest: readonly LabelMatch[], top: LabelMatch): LabelMatch {
  const tiers = new Map<FieldPath, Tier>();
  for (const m of longest) for (const [p, t] of m.tiers) if (!tiers.has(p) || t < (tiers.get(p) ?? 2)) tiers.set(p, t);
  return {
    ...top,
    owners: new Set(tiers.keys()),
    tiers,
    concepts: new Set(longest.flatMap((m) => [...m.concepts])),
    ranks: bestRanks(longest),
    title: longest.some((m) => m.title),
  };
}

/** Of the forms that match a cell, the longest plain one; the fields of all of that length (merged). */
function bestOf(all: readonly LabelMatch[]): LabelMatch | null {
  // A label followed by words that are no label ("Total for this invoice") counts only when no plain label matches.
  const plain = all.filter((m) => m.extra === undefined);
  const matches = plain.length > 0 ? plain : all;
  const size = Math.max(0, ...matches.map((m) => m.size));
  const longest = matches.filter((m) => m.size === size);
  const [top] = longest;
  // Two labels of the same words ("Total" of the total and of a column) name all their fields (one names its own).
  return top && longest.length > 1 ? merged(longest, top) : (top ?? null);
}

/** The first characters of BOX_PREFIX's boxes. */
const BOX_OPENERS = '☑☒✓✔☐[';

/** What may stand between two words of a label: spaces, - _ . / and parenthesised codes. */
const BETWEEN_WORDS = /^[\s\-_./']*(?:\([^)]*\)[\s\-_./']*)*$/;

/** Extra words after a label, then a colon or the cell's end: "for this invoice", "der Zuschläge". */
const EXTRA_WORDS = /^((?:[\s\-/]+[\p{L}][\p{L}'.]*){1,4})\s*(:.*)?$/u;

/**
 * Whether a form's second word (`form.secondKey` set) can match the cell's second token, as
 * matchForm compares them: the same word (number words alike: indexWord), or the token the
 * start of the word cut in two. A form whose first word matched and whose second cannot is no
 * match, so matchForm need not see it.
 */
function secondMayMatch(form: LabelForm, second: Token | undefined, secondKey: string | undefined): boolean {
  if (second === undefined) return false;
  if (form.secondKey === secondKey) return true;
  const w = form.words[1] ?? '';
  return w.length >= SPLIT_WORD_MIN && w.length > second.word.length && w.startsWith(second.word);
}

/**
 * Whether EXTRA_WORDS can match: its first word needs a letter after the run of spaces,
 * dashes and slashes that opens the text. An ASCII character there that is no letter (a
 * digit: "Total 12.50", most loose labels) rules it out; anything else is left to the pattern.
 */
function mayExtend(rest: string): boolean {
  let i = 0;
  for (; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (!(c === 0x20 || c === 0x2d || c === 0x2f || (c >= 0x09 && c <= 0x0d))) break;
  }
  if (i === rest.length) return false;
  const c = rest.charCodeAt(i);
  return c >= 0x80 || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || i === 0;
}

/**
 * Every label of a definition, each knowing the fields it names. The forms are built once
 * per definition (building them costs more than grounding a page); the answers per cell text
 * are remembered per document.
 */
export class LabelIndex {
  private readonly forms: LabelForms;
  /** Every field asks about every cell: remember the answer per text. */
  private readonly seen = new Map<string, LabelMatch | null>();

  /** everyForm: compare a cell with every form, and try every pattern, as before the shortcuts that skip them (tests' reference). */
  private readonly everyForm: boolean;

  constructor(fields: FieldDefinition, { everyForm = false }: { everyForm?: boolean } = {}) {
    this.forms = formsOf(fields);
    this.everyForm = everyForm;
  }

  /** The concept each field path stands for. */
  get conceptOf(): ReadonlyMap<FieldPath, Concept> {
    return this.forms.conceptOf;
  }

  /** Whether a match is a document title ("Facture" in "Facture FA-2017-0010"). */
  isTitle(m: LabelMatch): boolean {
    return m.title === true;
  }

  /**
   * The longest label at the start of a cell's text, with what follows it, or null. A label
   * must end at a word boundary followed by nothing, a colon, a parenthesis ("Tax (19%):")
   * or a space and more words.
   */
  match(text: string): LabelMatch | null {
    let m = this.seen.get(text);
    if (m === undefined) {
      m = this.matchUncached(text);
      this.seen.set(text, m);
    }
    return m;
  }

  private matchUncached(text: string): LabelMatch | null {
    let body = text;
    let box: string | undefined;
    // Every box opens with one of these characters: most cells skip the pattern.
    const boxed = BOX_OPENERS.includes(text.charAt(0)) ? BOX_PREFIX.exec(text) : null;
    if (boxed?.[1] !== undefined) {
      box = boxed[1];
      body = text.slice(boxed[0].length);
    }
    // "Total amount (net):", "Total € Incl. VAT", "19% VAT": the words the label composes (roles.ts).
    body = labelText(body, (t) => this.match(t)?.concepts);
    // The words a form can compare (one more for a word cut in two) and that numberAcross reads.
    const toks = tokens(body, Math.max(this.forms.maxWords + 1, 4));
    const first = toks[0];
    if (!first) return null;
    if (first.start > 0) {
      const before = body.slice(0, first.start);
      if (/[\p{L}\p{N}]/u.test(before)) return null;
      if (before.trim() !== '' && box === undefined) return null;
    }
    const second = toks[1];
    const joined =
      second &&
      (this.everyForm || this.forms.joinable.has(first.word)) &&
      second.start === first.end + 1 &&
      body.charCodeAt(first.end) === 0x20
        ? this.forms.byFirst.get(first.word + second.word)
        : undefined;
    const all: LabelMatch[] = [];
    // The forms of the cell's first word whose second word can be the cell's ("Total │ amount", or
    // its start when pdfjs cut it): the others fail there ("Total: 12.50" tries 2 forms of 32).
    const byFirst = this.forms.byFirst.get(indexWord(first.word));
    if (byFirst) {
      const secondKey = second === undefined ? undefined : indexWord(second.word);
      for (const form of byFirst) {
        if (form.secondKey !== undefined && !this.everyForm && !secondMayMatch(form, second, secondKey)) continue;
        const m = this.matchForm(body, toks, form);
        if (m) all.push(m);
      }
    }
    this.matchForms(body, toks, joined, all);
    // A suffix form's first word ("*rechnung") matches only as a suffix: never cut in two (no token holds "*").
    for (const form of this.forms.suffixed) {
      if (!this.everyForm && !wordsEqual(form.words[0] ?? '', first.word)) continue;
      const m = this.matchForm(body, toks, form);
      if (m) all.push(m);
    }
    // One match is its own best (bestOf would return it as is).
    const best = all.length === 0 ? null : all.length === 1 ? (all[0] ?? null) : bestOf(all);
    if (best && box !== undefined) {
      if (best.rest !== '' || best.colon) return null;
      return { ...best, box };
    }
    if (box === undefined && (best === null || (best.title && best.kind === 'loose')))
      return this.numberAcross(body, toks) ?? best;
    return best;
  }

  private matchForms(body: string, toks: Token[], forms: readonly LabelForm[] | undefined, all: LabelMatch[]): void {
    if (forms === undefined) return;
    for (const form of forms) {
      const m = this.matchForm(body, toks, form);
      if (m) all.push(m);
    }
  }

  /**
   * A heading that names its issuer or its kind between the title and the number word
   * ("Rechnung des Versicherers (575) Nr. 4711", "Schlussrechnung Bau Nr. 4711"): read as
   * the title's own number label ("Rechnung Nr."), when one or two plain words stand between
   * and neither they nor what they open are a label ("Bestellung Nr." is an order's number)
   * or a preposition pointing at another document ("zur Bestellung", "for Order").
   */
  private numberAcross(body: string, toks: Token[]): LabelMatch | null {
    const [first] = toks;
    if (!first) return null;
    for (let k = 2; k <= 3; k++) {
      const numberWord = toks[k];
      if (!numberWord || !NUMBER_WORDS.has(numberWord.word)) continue;
      const between = toks.slice(1, k);
      if (between.some((t) => !/^\p{L}+$/u.test(t.word) || POINTING.has(t.word))) return null;
      if (!BETWEEN_WORDS.test(body.slice(first.end, between[0]?.start))) return null;
      if (between.some((t) => this.match(body.slice(t.start)) !== null)) return null;
      const m = this.match(`${body.slice(0, first.end)} ${body.slice(numberWord.start)}`);
      if (!m?.concepts.has('invoice_number') || m.size < 2 || m.kind !== 'clean') return null;
      return m;
    }
    return null;
  }

  private matchForm(body: string, toks: Token[], form: LabelForm): LabelMatch | null {
    if (toks.length < form.words.length) return null;
    let k = 0;
    let prev: Token | undefined;
    for (const w of form.words) {
      const t = toks[k];
      if (!t) return null;
      const next = toks[k + 1];
      let to: Token;
      if (wordsEqual(w, t.word)) {
        to = t;
      } else if (
        next &&
        w.length >= SPLIT_WORD_MIN &&
        body.slice(t.end, next.start) === ' ' &&
        t.word + next.word === w
      ) {
        // pdfjs cut the word with a space inside a glyph run ("Br uttosumme", "Zahlbetr ag").
        to = next;
      } else {
        return null;
      }
      // The words compared first: most forms fail on a word, and this test is dearer (one space passes it).
      if (
        prev &&
        !(t.start === prev.end + 1 && body.charCodeAt(prev.end) === 0x20) &&
        !BETWEEN_WORDS.test(body.slice(prev.end, t.start))
      )
        return null;
      k += to === t ? 1 : 2;
      prev = to;
    }
    const last = prev;
    if (!last) return null;
    let rest = body.slice(last.end);
    const afterNumberSign = last.word === '#';
    if (rest.charCodeAt(0) === 0x2e) rest = rest.replace(/^\.(?=\s|:|$)/, '');
    if (rest.includes('(')) rest = rest.replace(/^\s*\([^)]*\)/, '');
    form.ownerSet ??= new Set(form.owners.keys());
    const owners = form.ownerSet;
    const made = (kind: LabelMatch['kind'], rest: string, colon: boolean): LabelMatch => ({
      owners,
      tiers: form.owners,
      concepts: form.concepts,
      ranks: form.ranks,
      size: form.words.length,
      title: form.title,
      kind,
      rest,
      colon,
    });
    const colon = /^\s*:/.test(rest);
    // "Currency:: EUR": a doubled colon is one.
    if (colon) return made('clean', rest.replace(/^\s*:+/, '').trim(), colon);
    const trimmed = rest.trim();
    if (trimmed === '') return made('clean', '', colon);
    // "Total EUR", "Betrag €", "Steuerbetrag in EUR", "Steuerbetrag in │ EUR": the currency the amount is in.
    if (namesCurrencyOfAmount(trimmed)) return made('clean', '', colon);
    if (/^\s/.test(rest) || afterNumberSign) {
      const kind = NUMBER_WORDS.has(last.word) ? 'clean' : 'loose';
      // "Bestellung Nr. Kunde: │ B123": words and a colon after a number word qualify the number; the value follows.
      const qualified = kind === 'clean' ? /^\s*(\p{L}[\p{L}.-]*(?:\s+\p{L}[\p{L}.-]*)?)\s*:(.*)$/u.exec(rest) : null;
      // Whose number it is (a party: "Kunde", "Lieferant"), never another label ("Kunden-Nr. USt-IdNr.:").
      const whose = qualified?.[1] === undefined ? null : this.match(qualified[1]);
      if (
        qualified?.[2] !== undefined &&
        (whose === null || (whose.concepts.size > 0 && [...whose.concepts].every((c) => PARTY_CONCEPTS.has(c))))
      )
        return made('clean', qualified[2].trim(), true);
      const extended = kind === 'loose' && (this.everyForm || mayExtend(rest)) ? EXTRA_WORDS.exec(rest) : null;
      if (extended?.[1] !== undefined) {
        const after = extended[2];
        const m = made('clean', after === undefined ? '' : after.slice(1).trim(), after !== undefined);
        m.extra = extended[1].trim();
        return m;
      }
      return made(kind, trimmed, colon);
    }
    return null;
  }

  /** Whether a cell is a label and nothing else ("Invoice Date", "Total:"): then it is no value. */
  isBareLabel(text: string): boolean {
    const m = this.match(text);
    return m !== null && m.kind === 'clean' && m.rest === '' && m.box === undefined && m.extra === undefined;
  }

  /** Whether a cell opens with a label ("Date: 15/03/2024", "Total"): then it is no other field's value. */
  isLabelled(text: string): boolean {
    const m = this.match(text);
    return m !== null && m.extra === undefined && !m.title && (m.kind === 'clean' || m.box !== undefined);
  }
}
