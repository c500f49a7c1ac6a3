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

/**
 * Records that can give their JSON Lines text as it was kept (batch/records.ts: the line made as
 * each record was emitted), so the writer copies it: no record is read back, parsed and written
 * out again. Undefined: the writer makes each line from the record.
 */
export const JSON_LINES = Symbol('JSON Lines text');
export type WithJsonLines = { [JSON_LINES]?: () => Iterable<string> | undefined };

export function* jsonlChunks(records: Iterable<DocumentRecord> & WithJsonLines): Generator<string> {
  const lines = records[JSON_LINES]?.();
  if (lines !== undefined) {
    yield* lines;
    return;
  }
  for (const record of records) yield jsonLine(record);
}

/** One JSON array, each record indented (indentJson). */
export function* jsonArrayChunks(records: Iterable<DocumentRecord>): Generator<string> {
  // Each record is written once the next is read: the last one has no comma.
  let previous: DocumentRecord | undefined;
  for (const record of records) {
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

function indented(record: DocumentRecord): string {
  return indentJson(JSON.stringify(recordFields(record), null, 2), '  ');
}

/**
 * JSON text indented by `pad` on every line, to nest it in an array. JSON escapes \n inside
 * strings, so every raw one ends a line; not a regular expression's ^ with the m flag, which
 * also matches after U+2028 and U+2029 (JSON.stringify leaves those raw) and would put spaces
 * inside a value.
 */
export function indentJson(text: string, pad: string): string {
  return pad + text.replaceAll('\n', `\n${pad}`);
}

export function documentJson(record: DocumentRecord): string {
  return `${JSON.stringify(recordFields(record), null, 2)}\n`;
}
