import type { ResultValue, Results } from '../contract/index.ts';
import type { DocumentRecord } from './record-schema.ts';
import { storedHoldsNull, storedText } from './stored-results.ts';

/**
 * What a person must look at (spec, "Delivery rules" 6: null is missing information to route to
 * a person, never zero). One rule for the batch run's records, report and --review list, and for
 * `extract listen`'s review.jsonl.
 */

/**
 * Paths of every null in the results: `total`, `customer.email`, `lines[1].amount`. An Object
 * field that is null as a whole is listed by its own name. Results read back from the journal
 * are looked inside only when their text holds a null at all (most hold none).
 */
export function nullFields(results: Results): string[] {
  const text = storedText(results);
  if (text !== undefined && !text.includes('null')) return [];
  // Parsed here, not through the stored results (which would keep the parsed tree as long as the record).
  const value: Results = text === undefined ? results : (JSON.parse(text) as Results);
  const found: string[] = [];
  const visit = (value: ResultValue, path: string): void => {
    if (value === null) found.push(path);
    else if (Array.isArray(value)) for (const [i, row] of value.entries()) visit(row, `${path}[${i}]`);
    else if (typeof value === 'object')
      for (const [key, child] of Object.entries(value)) visit(child, `${path}.${key}`);
  };
  for (const [key, child] of Object.entries(value)) visit(child, key);
  return found;
}

/** Whether a record needs a person: a completed one with a null (or no results at all); null when it did not complete. */
export function needsReview(record: Pick<DocumentRecord, 'status' | 'results'>): boolean | null {
  if (record.status !== 'completed') return null;
  return record.results === null || hasNull(record.results);
}

/**
 * Whether any value in the results is null. Results read back from the journal are scanned as
 * text for a `null` outside a string, not parsed: a rerun's JSON Lines output copies them whole.
 */
function hasNull(results: Results): boolean {
  return storedHoldsNull(results, textHasNull) ?? nullFields(results).length > 0;
}

function textHasNull(text: string): boolean {
  if (!text.includes('null')) return false;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === N && text.startsWith('null', i)) return true;
  }
  return false;
}

const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const N = 0x6e;

/** One line of a review list: `extract listen`'s review.jsonl, a run's --review file and report. */
export type ReviewEntry = { document_id: string | null; file_name: string; null_fields: string[] };

/**
 * The review entry of a record that needs one. Its paths are found when first read (the report,
 * --review): a run that only counts them scans stored results as text and parses none.
 */
export function reviewEntry(
  record: Pick<DocumentRecord, 'status' | 'results' | 'file' | 'document_id'>,
): ReviewEntry | undefined {
  if (needsReview(record) !== true) return undefined;
  const results = record.results;
  let paths: string[] | undefined;
  return {
    document_id: record.document_id,
    file_name: record.file,
    get null_fields(): string[] {
      paths ??= results === null ? [] : nullFields(results);
      return paths;
    },
  };
}
