import { recordFields, type DocumentRecord } from './record.ts';
import { storedText } from './stored-results.ts';

/**
 * One JSON Lines line of a record's own fields (recordFields: report entries carry more),
 * newline included; stored results are copied as their text.
 */
export function jsonLine(record: DocumentRecord): string {
  const stored = storedText(record.results);
  if (stored === undefined) return `${JSON.stringify(recordFields(record))}\n`;
  // results is the last key: the rest serialised, then the stored text where its null was.
  const head = JSON.stringify(recordFields(record, null));
  return `${head.slice(0, -'null}'.length)}${stored}}\n`;
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
    const text = JSON.stringify(recordFields(record), null, 2).replace(/^/gm, '  ');
    yield i < records.length - 1 ? `${text},\n` : `${text}\n`;
  }
  yield ']\n';
}

export function documentJson(record: DocumentRecord): string {
  return `${JSON.stringify(recordFields(record), null, 2)}\n`;
}

/** jsonArrayChunks over records read one at a time (never all in memory): the same text. */
export async function* jsonArrayChunksFrom(records: AsyncIterable<DocumentRecord>): AsyncGenerator<string> {
  let previous: DocumentRecord | undefined;
  const indented = (record: DocumentRecord): string =>
    JSON.stringify(recordFields(record), null, 2).replace(/^/gm, '  ');
  for await (const record of records) {
    yield previous === undefined ? '[\n' : `${indented(previous)},\n`;
    previous = record;
  }
  if (previous === undefined) {
    yield '[]\n';
    return;
  }
  yield `${indented(previous)}\n`;
  yield ']\n';
}
