import type { FieldDefinition, LeafField, LeafValue, Results } from '../contract/index.ts';
import { type Candidate, candidates } from './candidates.ts';
import { parseDate } from './dates.ts';
import { blocksOf, fillParty } from './parties.ts';
import { type Doc, lineKey } from './scope.ts';
import { cellsLabelling } from './scope-index.ts';
import { type Rival, checkSums } from './sums.ts';
import { type TableRead, placeOf, readTable } from './tables.ts';
import type { FieldPath, Grounding, Place } from './types.ts';
import { currenciesOfAmounts, parseValue } from './values.ts';
import type { Concept } from './vocabulary/index.ts';

/**
 * Grounding: a field gets a value only when a label of that field stands before it on the
 * same line, or directly above it in the same column, and the value parses as the field's
 * type. Everything else is null. Where the document offers two different values for one
 * field, or a labelled value that does not parse, the answer is null too: the engine
 * never picks one.
 */

export function groundDefinition(fields: FieldDefinition, doc: Doc): { results: Results; grounding: Grounding } {
  const tables = new Map<FieldPath, TableRead>();
  const tableLines = new Set<string>();
  collectTables(fields, '', doc, tables, tableLines);
  // Without a table's lines (most documents) the scope is the whole: no key made per line to find none.
  const scope = tableLines.size === 0 ? doc.scope : doc.scope.filter((sl) => !tableLines.has(lineKey(sl.line)));
  const tableTotals = new Map([...tables.values()].flatMap((t) => [...t.totals]));
  const grounding: Grounding = {};
  const results = groundFields(fields, '', '', { ...doc, scope, whole: doc.scope, tableTotals }, tables, grounding);
  return { results, grounding };
}

function collectTables(
  fields: FieldDefinition,
  prefix: string,
  doc: Doc,
  out: Map<FieldPath, TableRead>,
  lines: Set<string>,
): void {
  for (const f of fields) {
    const path = prefix + f.name;
    if (f.type === 'table') {
      const read = readTable(f, path, doc);
      out.set(path, read);
      for (const k of read.lines) lines.add(k);
    } else if (f.type === 'object') {
      collectTables(f.fields, `${path}.`, doc, out, lines);
    }
  }
}

function groundFields(
  fields: FieldDefinition,
  prefix: string,
  outPrefix: string,
  doc: Doc,
  tables: Map<FieldPath, TableRead>,
  grounding: Grounding,
): Results {
  const out: Results = {};
  /** Decimal fields no label offered any value for, and those whose labels offered rival values. */
  const unlabelled: string[] = [];
  const rivals = new Map<string, readonly Rival[]>();
  for (const f of fields) {
    const path = prefix + f.name;
    const outPath = outPrefix + f.name;
    if (f.type === 'table') {
      const read = tables.get(path);
      out[f.name] = read?.rows ?? null;
      for (const [i, row] of (read?.places ?? []).entries()) {
        for (const [column, place] of Object.entries(row)) grounding[`${outPath}[${i}].${column}`] = place;
      }
    } else if (f.type === 'object') {
      const blocks = blocksOf(path, doc);
      const inner = groundFields(
        f.fields,
        `${path}.`,
        `${outPath}.`,
        { ...doc, scope: blocks.flat() },
        tables,
        grounding,
      );
      fillParty(f, path, outPath, inner, blocks, doc, grounding);
      out[f.name] = inner;
    } else {
      let found = groundLeaf(f, path, doc);
      if (found.value === null && prefix === '' && doc.labels.conceptOf.get(path) === 'currency')
        found = { ...(currencyOfAmounts(path, doc) ?? found), offered: found.offered };
      if (found.value === null && !found.offered && prefix === '' && f.type === 'decimal') unlabelled.push(f.name);
      if (found.rivals && prefix === '') rivals.set(f.name, found.rivals);
      out[f.name] = found.value;
      if (found.value !== null && found.at) grounding[outPath] = found.at;
    }
  }
  if (prefix === '') checkSums(fields, out, rivals, unlabelled, doc, grounding);
  return out;
}

function groundLeaf(
  field: LeafField,
  path: FieldPath,
  doc: Doc,
): { value: LeafValue; at: Place | undefined; offered: boolean; rivals?: Rival[] } {
  const vetoes: string[] = [];
  const all = candidates(field, path, doc, vetoes);
  const offered = all.length > 0;
  const found = decide(field, all, vetoes, doc);
  if (found.value !== null) return { ...found, offered };
  const ranked = byVocabularyRank(all, doc.labels.conceptOf.get(path));
  return { ...(ranked ? decide(field, ranked, vetoes, doc) : found), offered, rivals: found.rivals };
}

/**
 * A user's labels of equal rank that disagree ("Gesamtbetrag" and "Zahlbetrag" both aliases,
 * and a deposit between them): the vocabulary's own ranking of those labels for the field's
 * concept (or the one concept they share) decides, as it does for the built-in fields, with
 * the same checks. Labels the vocabulary does not rank for it: no ranking.
 */
function byVocabularyRank(all: Candidate[], concept: Concept | undefined): Candidate[] | null {
  const own = all.filter((c) => c.tier === 0);
  if (own.length < 2) return null;
  let shared = concept;
  if (shared === undefined) {
    const common = [...(own[0]?.ranks?.keys() ?? [])].filter((k) => own.every((c) => c.ranks?.has(k)));
    if (common.length !== 1) return null;
    shared = common[0];
  }
  const ranked: Candidate[] = [];
  for (const c of own) {
    const rank = shared === undefined ? undefined : c.ranks?.get(shared);
    if (rank === undefined) return null;
    ranked.push({ ...c, tier: rank });
  }
  return ranked;
}

function decide(
  field: LeafField,
  all: Candidate[],
  vetoes: string[],
  doc: Doc,
): { value: LeafValue; at: Place | undefined; rivals?: Rival[] } {
  const best = Math.min(Infinity, ...all.map((c) => c.tier));
  const values = new Set<string>();
  let found: { value: LeafValue; at: Place | undefined } = { value: null, at: undefined };
  const rivals: Rival[] = [];
  for (const c of all) {
    if (c.tier !== best) continue;
    const value = c.parsed !== undefined ? c.parsed : parseValue(field.type, c.text, doc.hints);
    if (value === null) {
      if (c.strong) return { value: null, at: undefined }; // a labelled value that is not of the field's type
      continue;
    }
    values.add(JSON.stringify(value));
    found = { value, at: c.at };
    if (typeof value === 'number') rivals.push({ value, at: c.at });
  }
  // Labels of one rank that disagree: no value, and their amounts for the sums' check (sums.ts).
  if (values.size !== 1) return { value: null, at: undefined, ...(values.size > 1 ? { rivals } : {}) };
  if (field.type === 'date' && vetoes.some((v) => parseDate(v, doc.hints.dateOrder) !== found.value))
    return { value: null, at: undefined };
  if (best < 2 && typeof found.value === 'number' && !dueAgrees(found.value, all, field, doc))
    return { value: null, at: undefined };
  return found;
}

/**
 * A total with an amount due that differs ("Total TTC 671,15", "Solde à payer 470,15") is
 * kept only when the document prints the difference (a deposit of 201,00): two totals that
 * disagree for no reason the page shows make the field null.
 */
function dueAgrees(total: number, all: Candidate[], field: LeafField, doc: Doc): boolean {
  const dues = new Set<number>();
  for (const c of all) {
    if (c.tier !== 2) continue;
    const v = parseValue(field.type, c.text, doc.hints);
    if (typeof v === 'number' && Math.abs(v - total) >= 0.005) dues.add(v);
  }
  if (dues.size === 0) return true;
  if (dues.size > 1) return false;
  const [due = 0] = dues;
  const gap = Math.abs(total - due);
  for (const sl of doc.scope) {
    for (const cell of sl.cells) {
      for (const m of cell.text.matchAll(/-?\(?[\d][\d.,' \u00a0]*\d\)?/g)) {
        const v = parseValue('decimal', m[0], doc.hints);
        if (typeof v === 'number' && Math.abs(Math.abs(v) - gap) < 0.005) return true;
      }
    }
  }
  return false;
}

/**
 * The currency of a document that labels none: the one its amounts' marks name, when every
 * mark names the same ("529,87 €" throughout). A mark of several ("$") or two currencies: null.
 */
function currencyOfAmounts(path: FieldPath, doc: Doc): { value: LeafValue; at: Place | undefined } | null {
  // A label of the field printed anywhere: not this rule's to answer.
  if (cellsLabelling(path, doc).length > 0) return null;
  const seen = new Map<string, Place>();
  for (const sl of doc.scope) {
    for (const cell of sl.cells) {
      for (const currency of currenciesOfAmounts(cell.text)) seen.set(currency, placeOf(sl.line, cell));
    }
  }
  const [[value, at] = ['?', undefined]] = seen;
  return seen.size === 1 && value !== '?' ? { value, at } : null;
}
