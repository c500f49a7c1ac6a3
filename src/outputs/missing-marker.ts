import type { ResultValue, Results } from '../contract/index.ts';
import type { DocumentRecord } from './record-schema.ts';
import { storedResults, storedText } from './stored-results.ts';

/**
 * The service as deployed writes a value it could not read as a string, `"-"` (its
 * FALLBACK_VALUE), where the interface says null; a model failure on a short document answers
 * every field so. A leaf that is exactly this marker is missing information, as null is: it
 * becomes null where results become records, so every writer, the review list and the counts
 * see one thing. The journal keeps the answer as the service gave it.
 */
export const DEFAULT_MISSING_MARKER = '-';

/** The text read as missing, or null when none is (a service that writes null, as the interface says). */
export type MissingMarker = string | null;

/**
 * The results with every leaf exactly equal to `marker` made null; the same object when none is
 * (a key is never a leaf: only values change). Stored results are looked inside only when their
 * text holds the marker as a JSON string, and stay stored results (text) when changed.
 */
export function withoutMarker(results: Results, marker: MissingMarker): Results {
  if (marker === null) return results;
  const text = storedText(results);
  if (text !== undefined) {
    if (!text.includes(JSON.stringify(marker))) return results;
    const parsed = JSON.parse(text) as Results;
    const cleared = clearObject(parsed, marker);
    return cleared === parsed ? results : storedResults(JSON.stringify(cleared));
  }
  return clearObject(results, marker);
}

/** A record (or anything carrying results: a report entry) with its results read through withoutMarker. */
export function recordWithoutMarker<T extends Pick<DocumentRecord, 'results'>>(record: T, marker: MissingMarker): T {
  if (marker === null || record.results === null) return record;
  const results = withoutMarker(record.results, marker);
  return results === record.results ? record : { ...record, results };
}

function clearValue(value: ResultValue, marker: string): ResultValue {
  if (value === marker) return null;
  if (Array.isArray(value)) {
    let out: ResultValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const row = value[i] as ResultValue;
      const cleared = clearValue(row, marker);
      if (cleared === row) continue;
      out ??= value.slice();
      out[i] = cleared;
    }
    return (out ?? value) as ResultValue;
  }
  if (typeof value === 'object' && value !== null) return clearObject(value, marker);
  return value;
}

function clearObject(value: Results, marker: string): Results {
  let changed = false;
  const entries = Object.entries(value).map(([key, child]): [string, ResultValue] => {
    const cleared = clearValue(child, marker);
    if (cleared !== child) changed = true;
    return [key, cleared];
  });
  // fromEntries defines each key as its own property: a field named __proto__ stays a field.
  return changed ? (Object.fromEntries(entries) as Results) : value;
}
