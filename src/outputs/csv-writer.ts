import { open } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { encodeCell, neutraliseFormula } from './csv.ts';
import { createFlattener, DOCUMENT_COLUMNS, type Flattener, type FlatRows, flattenRecords } from './flatten.ts';
import type { DocumentRecord } from './record.ts';

/**
 * The CSV text of records (cells encoded by csv.ts). A module of its own, imported by
 * write.ts only for a CSV output, so csv-stringify loads only then: a JSON or JSON Lines run
 * never needs it.
 */

// Only the empty string is quoted on purpose; csv-stringify quotes what needs it (commas,
// quotes, newlines) by itself, and leaves null cells bare.
const STRINGIFY_OPTIONS = { quoted_match: /^$/ } as const;
const ROWS_PER_CHUNK = 500;
/** csvChunksFrom yields text in chunks of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

export type CsvOptions = {
  explode?: string | undefined;
  /** A cap on the columns (flatten.ts); what it leaves out is handed to `onLeftOut` before the first chunk. */
  maxColumns?: number | undefined;
  onLeftOut?: ((leftOut: FlatRows['leftOut']) => void) | undefined;
};

/** The CSV text in chunks, so a large batch is never one huge string. Warnings go to `warn`. */
export function* csvChunks(
  records: readonly DocumentRecord[],
  options: CsvOptions = {},
  warn: (message: string) => void = () => {},
): Generator<string> {
  const { columns, rows, warnings, leftOut } = flattenRecords(records, options.explode, options.maxColumns);
  for (const w of warnings) warn(w);
  options.onLeftOut?.(leftOut);
  yield stringify([columns.map(neutraliseFormula)], STRINGIFY_OPTIONS);
  for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) {
    const batch = rows.slice(i, i + ROWS_PER_CHUNK).map((row) => columns.map((c) => encodeCell(row.get(c))));
    yield stringify(batch, STRINGIFY_OPTIONS);
  }
}

/** Records read again on each call, in the same order: a view of a store, not an array in memory. */
export type RecordSource = () => AsyncIterable<DocumentRecord> | Iterable<DocumentRecord>;

/**
 * The first of two passes over records never all in memory at once: learns the columns (capped
 * at `maxColumns`). The flattener it returns then turns each record into rows against columns
 * that no longer grow, and names the columns the cap left out of it (`add(record).left`).
 */
export async function learnColumns(
  source: RecordSource,
  maxColumns?: number,
  explode?: string,
  keep?: readonly string[],
): Promise<Flattener> {
  const flattener = createFlattener(explode, maxColumns, keep);
  for await (const record of source()) flattener.add(record);
  return flattener;
}

/**
 * The second pass: the CSV text, the same as csvChunks over the same records in the same order
 * (with the same --explode given to learnColumns), a chunk of rows at a time.
 */
export async function* csvChunksFrom(
  source: RecordSource,
  flattener: Flattener,
  protect = true,
): AsyncGenerator<string> {
  const columns = flattener.columns();
  yield stringify([protect ? columns.map(neutraliseFormula) : columns], STRINGIFY_OPTIONS);
  // Chunks of about CHUNK_CHARS, whatever the number of rows: a record can be megabytes.
  let pending = '';
  for await (const record of source()) {
    const rows = flattener.add(record).rows.map((row) => columns.map((c) => encodeCell(row.get(c), protect)));
    pending += stringify(rows, STRINGIFY_OPTIONS);
    if (pending.length >= CHUNK_CHARS) {
      yield pending;
      pending = '';
    }
  }
  if (pending !== '') yield pending;
}

/** The most of a file read to find its header's end: a header is a line of column names. */
const HEADER_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The columns of the CSV of records at `path`, as its header names them, for the run that
 * replaces it to keep (learnColumns' `keep`): a file's columns stay the same from night to night,
 * whatever the night's records hold. None for a file that is missing, empty, or not a CSV of
 * records (its header does not start with the document columns): that one is replaced as before.
 */
export async function csvHeaderOf(path: string): Promise<string[] | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const chunks: Buffer[] = [];
    let length = 0;
    while (length < HEADER_MAX_BYTES) {
      const { bytesRead, buffer } = await handle.read({ buffer: Buffer.alloc(64 * 1024) });
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      const end = chunk.indexOf(10);
      chunks.push(end >= 0 ? chunk.subarray(0, end) : chunk);
      length += bytesRead;
      if (end >= 0) break;
    }
    const line = Buffer.concat(chunks).toString('utf8').replace(/\r$/, '');
    if (line === '') return undefined;
    const rows: string[][] = parse(line, { relax_quotes: true });
    const header = rows[0] ?? [];
    return DOCUMENT_COLUMNS.every((c, i) => header[i] === c) ? header : undefined;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}
