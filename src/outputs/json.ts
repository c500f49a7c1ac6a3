import type { DocumentRecord } from './record.ts';

/**
 * The record with its keys in one documented order (scalars first, results last), so
 * outputs read the same whatever order the pipeline built the object in. Keys added to
 * DocumentRecord later are kept, after these.
 */
export function orderedRecord(record: DocumentRecord): DocumentRecord {
  const { file, document_id, status, page_count, route, error, results, ...rest } = record;
  return { file, document_id, status, page_count, route, error, ...rest, results };
}

/** One JSON Lines line, newline included. */
export function jsonLine(record: DocumentRecord): string {
  return `${JSON.stringify(orderedRecord(record))}\n`;
}

export function* jsonlChunks(records: readonly DocumentRecord[]): Generator<string> {
  for (const record of records) yield jsonLine(record);
}

/** One JSON array, each record indented; JSON escapes newlines in strings, so indenting by line is safe. */
export function* jsonArrayChunks(records: readonly DocumentRecord[]): Generator<string> {
  if (records.length === 0) {
    yield '[]\n';
    return;
  }
  yield '[\n';
  for (const [i, record] of records.entries()) {
    const text = JSON.stringify(orderedRecord(record), null, 2).replace(/^/gm, '  ');
    yield i < records.length - 1 ? `${text},\n` : `${text}\n`;
  }
  yield ']\n';
}

export function documentJson(record: DocumentRecord): string {
  return `${JSON.stringify(orderedRecord(record), null, 2)}\n`;
}
