import { stringify } from 'csv-stringify/sync';
import { ExtractError } from '../errors.ts';
import type { DocumentRecord } from './record.ts';
import { type Cell, flattenRecords } from './flatten.ts';

/**
 * CSV encoding of records (README: "Outputs"). Cells are encoded as:
 * - null: an empty unquoted cell (`,,`), never 0 and never the text "null";
 * - an empty string: a quoted empty cell (`,"",`), so a reader can tell it from null;
 * - a number: as JavaScript prints it (`-12.5`, `1e+21`), never neutralised;
 * - a boolean: `true` / `false`;
 * - a string: neutralised if a spreadsheet would run it as a formula (see neutraliseFormula).
 */

// OWASP "CSV Injection": these leading characters make spreadsheets evaluate a cell. The
// full-width forms are included because some spreadsheet apps fold them to ASCII.
const FORMULA_LEADS = new Set(['=', '+', '-', '@', '\t', '\r', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20']);

/** Prefixes `'` to a string a spreadsheet would run as a formula; other strings are unchanged. */
export function neutraliseFormula(text: string): string {
  const lead = text[0];
  return lead !== undefined && FORMULA_LEADS.has(lead) ? `'${text}` : text;
}

export function encodeCell(value: Cell | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return neutraliseFormula(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return Number.isFinite(value) ? String(value) : null;
}

// Only the empty string is quoted on purpose; csv-stringify quotes what needs it (commas,
// quotes, newlines) by itself, and leaves null cells bare.
const STRINGIFY_OPTIONS = { quoted_match: /^$/ } as const;
const ROWS_PER_CHUNK = 500;

export type CsvOptions = { explode?: string | undefined };

/** The CSV text in chunks, so a large batch is never one huge string. Warnings go to `warn`. */
export function* csvChunks(
  records: readonly DocumentRecord[],
  options: CsvOptions = {},
  warn: (message: string) => void = () => {},
): Generator<string> {
  const { columns, rows, warnings } = flattenRecords(records, options.explode);
  for (const w of warnings) warn(w);
  yield stringify([columns.map(neutraliseFormula)], STRINGIFY_OPTIONS);
  for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) {
    const batch = rows.slice(i, i + ROWS_PER_CHUNK).map((row) => columns.map((c) => encodeCell(row.get(c))));
    yield stringify(batch, STRINGIFY_OPTIONS);
  }
}

/**
 * Checks the --explode values when the run starts, before anything is paid for: one table
 * at a time (two tables in one CSV would need a cross product of their rows), a dotted path
 * with no empty segment (`lines` or `order.lines`).
 */
export function parseExplode(values: readonly string[] | string | undefined): string | undefined {
  const list = values === undefined ? [] : typeof values === 'string' ? [values] : values;
  if (list.length > 1) {
    throw new ExtractError(
      'usage',
      `--explode takes one table per run, got ${list.join(', ')}: keep one, and write another CSV for the other`,
    );
  }
  const path = list[0];
  if (path !== undefined && (path === '' || path.split('.').some((s) => s === ''))) {
    throw new ExtractError(
      'usage',
      `--explode "${path}" is not a field path: name a Table field, such as lines or order.lines`,
    );
  }
  return path;
}
