import { stringify } from 'csv-stringify/sync';
import { encodeCell, neutraliseFormula } from './csv.ts';
import { type FlatRows, flattenRecords } from './flatten.ts';
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
