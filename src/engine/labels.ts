import type { Field, FieldDefinition } from '../contract/index.ts';
import { BOX_PREFIX } from './values.ts';

/**
 * How a field is recognised in a document: its `label`, its `aliases` and the words of its
 * name, compared word by word without regard to case, accents or the punctuation between
 * words. "Number" also matches "No", "No.", "Nr", "Num" and "#", so `invoice_number` finds
 * "Invoice Number", "Invoice No.", "Invoice #" and "Invoice no:".
 *
 * Every label of the whole definition competes for each cell and the longest wins, so
 * "Invoice Date" is never read as the label "Invoice" followed by the value "Date", and
 * "Subtotal" never as "Total".
 */

const NUMBER_WORDS = new Set(['number', 'no', 'nr', 'num', '#', 'nº', 'n°', 'no.']);

/** A path names a field in the definition: "vendor.name", "line_items[].amount". */
export type FieldPath = string;

type Token = { word: string; start: number; end: number };

/** One way a label is written, as normalised words, and the fields it names. */
type LabelForm = { words: string[]; owners: Set<FieldPath> };

export type LabelMatch = {
  /** Fields the label names (a label such as "Name" can name a field of several objects). */
  owners: ReadonlySet<FieldPath>;
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
};

export function normaliseWord(word: string): string {
  return word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

function tokens(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}]+|#|№|[nN][º°]/gu)) {
    out.push({ word: normaliseWord(m[0]) === '№' ? '#' : normaliseWord(m[0]), start: m.index, end: m.index + m[0].length });
  }
  return out;
}

function wordsEqual(labelWord: string, docWord: string): boolean {
  if (labelWord === docWord) return true;
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

/** All the labels of one field: its label, its aliases and the words of its name. */
export function labelsOf(field: Pick<Field, 'name' | 'label' | 'aliases'>): string[][] {
  const forms = [field.label, ...(field.aliases ?? [])]
    .filter((l): l is string => l !== undefined)
    .map((l) => tokens(l).map((t) => t.word));
  forms.push(nameWords(field.name));
  return forms.filter((f) => f.length > 0);
}

/** Every label of a definition, each knowing the fields it names. */
export class LabelIndex {
  private readonly forms: LabelForm[] = [];
  /** Every field asks about every cell: remember the answer per text. */
  private readonly seen = new Map<string, LabelMatch | null>();

  constructor(fields: FieldDefinition) {
    this.add(fields, '');
  }

  private add(fields: FieldDefinition, prefix: string): void {
    for (const f of fields) {
      const path = prefix + f.name;
      this.addForms(f, path);
      if (f.type === 'object') this.add(f.fields, `${path}.`);
      if (f.type === 'table') for (const c of f.columns) this.addForms(c, `${path}[].${c.name}`);
    }
  }

  private addForms(field: Field, path: FieldPath): void {
    for (const words of labelsOf(field)) {
      const key = words.join(' ');
      const known = this.forms.find((f) => f.words.join(' ') === key);
      if (known) known.owners.add(path);
      else this.forms.push({ words, owners: new Set([path]) });
    }
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
    const boxed = BOX_PREFIX.exec(text);
    if (boxed?.[1] !== undefined) {
      box = boxed[1];
      body = text.slice(boxed[0].length);
    }
    const toks = tokens(body);
    const first = toks[0];
    if (!first || /[\p{L}\p{N}]/u.test(body.slice(0, first.start))) return null;
    if (body.slice(0, first.start).trim() !== '' && box === undefined) return null;
    const matches = this.forms.map((form) => this.matchForm(body, toks, form)).filter((m) => m !== null);
    const size = Math.max(0, ...matches.map((m) => m.size));
    const longest = matches.filter((m) => m.size === size);
    const [top] = longest;
    // Two labels of the same words ("Total" of the total and of a column) name all their fields.
    const best: LabelMatch | null = top ? { ...top, owners: new Set(longest.flatMap((m) => [...m.owners])) } : null;
    if (best && box !== undefined) {
      if (best.rest !== '' || best.colon) return null;
      return { ...best, box };
    }
    return best;
  }

  private matchForm(body: string, toks: Token[], form: LabelForm): LabelMatch | null {
    if (toks.length < form.words.length) return null;
    for (const [i, w] of form.words.entries()) {
      const t = toks[i];
      if (!t || !wordsEqual(w, t.word)) return null;
      const prev = toks[i - 1];
      if (prev && !/^[\s\-_./]*$/.test(body.slice(prev.end, t.start))) return null;
    }
    const last = toks[form.words.length - 1];
    if (!last) return null;
    let rest = body.slice(last.end);
    const afterNumberSign = last.word === '#';
    rest = rest.replace(/^\.(?=\s|:|$)/, '');
    rest = rest.replace(/^\s*\([^)]*\)/, '');
    const colon = /^\s*:/.test(rest);
    if (colon) {
      return { owners: form.owners, size: form.words.length, kind: 'clean', rest: rest.replace(/^\s*:/, '').trim(), colon };
    }
    if (rest.trim() === '') return { owners: form.owners, size: form.words.length, kind: 'clean', rest: '', colon };
    if (/^\s/.test(rest) || afterNumberSign) {
      const kind = NUMBER_WORDS.has(last.word) ? 'clean' : 'loose';
      return { owners: form.owners, size: form.words.length, kind, rest: rest.trim(), colon };
    }
    return null;
  }

  /** Whether a cell is a label and nothing else ("Invoice Date", "Total:"): then it is no value. */
  isBareLabel(text: string): boolean {
    const m = this.match(text);
    return m !== null && m.kind === 'clean' && m.rest === '' && m.box === undefined;
  }

  /** Whether a cell opens with a label ("Date: 15/03/2024", "Total"): then it is no other field's value. */
  isLabelled(text: string): boolean {
    const m = this.match(text);
    return m !== null && (m.kind === 'clean' || m.box !== undefined);
  }
}
