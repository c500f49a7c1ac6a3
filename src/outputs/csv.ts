import type { Cell } from './flatten.ts';

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

/**
 * `protect` false (--no-formula-protection) writes strings as they are: a CSV loaded into a
 * database, not opened in a spreadsheet, wants `+1 555 0100`, not `'+1 555 0100`.
 */
export function encodeCell(value: Cell | undefined, protect = true): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return protect ? neutraliseFormula(value) : value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return Number.isFinite(value) ? String(value) : null;
}
