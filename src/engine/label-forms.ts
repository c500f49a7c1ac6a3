import type { Field, FieldDefinition } from '../contract/index.ts';
import type { FieldPath } from './types.ts';
import { type ColumnConcept, columnConcept, columnTitles } from './vocabulary/columns.ts';
import { type Concept, TITLE_WORDS, conceptOf, vocabularyLabels } from './vocabulary/index.ts';
import { indexWord, nameWords, tokens } from './words.ts';

/**
 * The label forms of a definition: every way its fields' labels, aliases and names, the
 * vocabularies' labels and a table's column titles are written, as words, each knowing the
 * fields it names with their tiers and the concepts it stands for. Built once per
 * definition; LabelIndex (labels.ts) matches cells against them.
 */

/** 0: the field's label and aliases; 1: its name's words and the vocabulary; 2: fallback labels. */
export type Tier = 0 | 1 | 2;

/** One way a label is written, as normalised words, the fields it names (with tiers) and its concepts. */
export type LabelForm = {
  words: string[];
  /** indexWord of the second word, when there is one. */
  secondKey?: string;
  owners: Map<FieldPath, Tier>;
  /** The owners' paths, made at the first match (the forms are complete by then) and shared by every match. */
  ownerSet?: ReadonlySet<FieldPath>;
  concepts: Set<Concept>;
  /** The vocabulary's rank of the label for each concept: 1 its own label, 2 a fallback. */
  ranks: Map<Concept, 1 | 2>;
  title: boolean;
};

const COLUMN_CONCEPTS = new WeakMap<object, ColumnConcept | null>();

/** The concept a table's column stands for (columnConcept by its name's words), once per field object. */
export function columnConceptOf(column: Pick<Field, 'name' | 'type'>): ColumnConcept | undefined {
  let concept = COLUMN_CONCEPTS.get(column);
  if (concept === undefined) {
    concept = columnConcept(column, nameWords(column.name)) ?? null;
    COLUMN_CONCEPTS.set(column, concept);
  }
  return concept ?? undefined;
}

/** The words of the vocabulary's column titles, computed once per process (a fixed, small set). */
const titleWordsCache = new Map<string, readonly string[]>();
function titleWords(title: string): readonly string[] {
  let words = titleWordsCache.get(title);
  if (!words) {
    words = tokens(title).map((t) => t.word);
    titleWordsCache.set(title, words);
  }
  return words;
}

type VocabularyWords = { words: readonly string[]; concept: Concept | 'invoice_title'; fallback: boolean };
let vocabularyCache: VocabularyWords[] | undefined;

/** The vocabularies and titles as words, computed once per process (every document builds an index). */
function vocabularyWords(): VocabularyWords[] {
  if (!vocabularyCache) {
    vocabularyCache = vocabularyLabels().map(({ label, concept, fallback }) => {
      const words = tokens(label).map((t) => t.word);
      if (label.startsWith('*') && words[0] !== undefined) words[0] = `*${words[0]}`;
      return { words, concept, fallback };
    });
    for (const title of TITLE_WORDS)
      vocabularyCache.push({ words: tokens(title).map((t) => t.word), concept: 'invoice_title', fallback: false });
  }
  return vocabularyCache;
}

/** The label forms of one definition, built once and shared by every document read with it (never changed after). */
export class LabelForms {
  readonly forms: LabelForm[] = [];
  /** Forms by their first word, so a cell is compared only with the forms that can match it. */
  readonly byFirst = new Map<string, LabelForm[]>();
  /** Forms whose first word is a suffix ("*rechnung Nr"): compared with every cell. */
  readonly suffixed: LabelForm[] = [];
  /** The most words of any form: a cell's words past these (and two more) never decide its label. */
  maxWords = 0;
  /** Forms by their indexed words. */
  private readonly byKey = new Map<string, LabelForm>();
  /** The concept each field path stands for. */
  readonly conceptOf = new Map<FieldPath, Concept>();
  /** The proper prefixes of byFirst's words: a cell's first word can join its second into a form's first only when it is one. */
  readonly joinable = new Set<string>();

  constructor(fields: FieldDefinition) {
    this.add(fields, '');
    const top = new Map<Concept, FieldPath[]>();
    for (const [path, concept] of this.conceptOf) {
      // Fields inside an object are found only in its block, so the vocabulary may name them too ("vendor.vat_id").
      if (!path.includes('[]')) top.set(concept, [...(top.get(concept) ?? []), path]);
    }
    // The vocabulary names its concept's top-level fields; labels of other concepts name nothing but still compete.
    for (const { words, concept, fallback } of vocabularyWords()) {
      const owners = concept === 'invoice_title' ? [] : (top.get(concept) ?? []);
      this.addForm(
        [...words],
        concept,
        owners.map((path) => [path, fallback ? 2 : 1]),
        fallback ? 2 : 1,
      );
    }
    for (const word of this.byFirst.keys()) for (let n = 1; n < word.length; n++) this.joinable.add(word.slice(0, n));
  }

  private add(fields: FieldDefinition, prefix: string): void {
    for (const f of fields) {
      const path = prefix + f.name;
      this.addForms(f, path);
      if (f.type === 'object') this.add(f.fields, `${path}.`);
      if (f.type === 'table') for (const c of f.columns) this.addColumnForms(c, `${path}[].${c.name}`);
    }
  }

  private addForms(field: Field, path: FieldPath): void {
    const own = [field.label, ...(field.aliases ?? [])]
      .filter((l): l is string => l !== undefined)
      .map((l) => tokens(l).map((t) => t.word));
    for (const words of own) this.addForm(words, undefined, [[path, 0]]);
    const name = nameWords(field.name);
    this.addForm(name, undefined, [[path, 1]]);
    if (field.type !== 'table') {
      const concept = conceptOf(field, name);
      if (concept) this.conceptOf.set(path, concept);
    }
  }

  /** A table's column: its own labels, and the printed titles of the column concept it stands for. */
  private addColumnForms(column: Field, path: FieldPath): void {
    this.addForms(column, path);
    const concept = columnConcept(column, nameWords(column.name));
    if (!concept) return;
    for (const title of columnTitles(concept)) this.addForm([...titleWords(title)], undefined, [[path, 1]]);
  }

  private addForm(
    words: string[],
    concept: Concept | 'invoice_title' | undefined,
    owners: Array<[FieldPath, Tier]>,
    rank: 1 | 2 = 1,
  ): void {
    if (words.length === 0) return;
    const key = words.map(indexWord).join(' ');
    let form = this.byKey.get(key);
    if (!form) {
      form = { words, owners: new Map(), concepts: new Set(), ranks: new Map(), title: false };
      if (words[1] !== undefined) form.secondKey = indexWord(words[1]);
      this.forms.push(form);
      this.maxWords = Math.max(this.maxWords, words.length);
      this.byKey.set(key, form);
      const first = indexWord(words[0] ?? '');
      const same = this.byFirst.get(first);
      if (first.startsWith('*')) this.suffixed.push(form);
      else if (same) same.push(form);
      else this.byFirst.set(first, [form]);
    }
    if (concept === 'invoice_title') form.title = true;
    else if (concept) {
      form.concepts.add(concept);
      if (rank < (form.ranks.get(concept) ?? 3)) form.ranks.set(concept, rank);
    }
    for (const [path, tier] of owners) {
      const known = form.owners.get(path);
      if (known === undefined || tier < known) form.owners.set(path, tier);
    }
  }
}

/** Definitions whose forms were built, by their JSON (a few parsers per emulator: small). */
const FORMS_CACHE = new Map<string, LabelForms>();
const FORMS_CACHE_SIZE = 32;

export function formsOf(fields: FieldDefinition): LabelForms {
  const key = JSON.stringify(fields);
  let forms = FORMS_CACHE.get(key);
  if (forms) {
    FORMS_CACHE.delete(key);
  } else {
    forms = new LabelForms(fields);
    if (FORMS_CACHE.size >= FORMS_CACHE_SIZE) FORMS_CACHE.delete(FORMS_CACHE.keys().next().value ?? '');
  }
  FORMS_CACHE.set(key, forms);
  return forms;
}
