import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { ExtractError } from '../errors.ts';
import { readTextOrEmpty, writeFileAtomic } from './atomic.ts';
import { encodeCell, neutraliseFormula } from './csv.ts';
import { DOCUMENT_COLUMNS, type FlatRows, flattenRecords } from './flatten.ts';
import type { DocumentRecord } from './record.ts';

/**
 * A CSV file that grows as documents complete (`extract watch -o FILE.csv`, `extract listen -o
 * FILE.csv`), with one header. Loaded only for a CSV output (csv-parse and csv-stringify with it).
 * The header is the columns of the first records written; a record that brings a column the
 * header lacks (the first completed document after failures, which have no results) makes the
 * file be rewritten once, atomically, with that column added at the end and empty cells in the
 * rows before (the batch's rule: a file keeps its columns, a new one joins at the right). That
 * is once per column the header gains, so at most `maxColumns` times in the file's life whatever
 * arrives; every other write is an append of the new rows (growing-file.ts).
 *
 * An existing file is appended to only when it is a CSV of records (its header starts with the
 * document columns, as every CSV extract writes): rows of other columns are no place for a
 * record, and rewriting them would replace a file this command did not make. It is refused.
 */

// As csv-writer.ts: only the empty string is quoted on purpose, null cells stay bare.
const STRINGIFY_OPTIONS = { quoted_match: /^$/ } as const;

export type CsvFile = {
  /** The (file, document_id) of each row already in the file. */
  rows: Array<{ file: string; document_id: string | null }>;
  /** Appends the records' rows; with `maxColumns`, says per document the columns the cap left out. */
  append(
    records: readonly DocumentRecord[],
    explode: string | undefined,
    warn: (m: string) => void,
  ): Promise<{ leftOut: FlatRows['leftOut'] }>;
};

type Cell = string | null;

/**
 * `text` is what the file holds (growing-file.ts opened it, a torn last row cut off); `path` ''
 * is stdout. `maxColumns` caps the header (the document columns included): a column first seen
 * past it is left out of every row, and named in `leftOut`.
 */
export async function openCsvFile(
  path: string,
  text: string,
  appendText: (text: string) => Promise<void>,
  maxColumns = Number.POSITIVE_INFINITY,
  protect = true,
): Promise<CsvFile> {
  // The header holds names as written (a formula-like name neutralised unless --no-formula-protection).
  const nameOf = (column: string): string => (protect ? neutraliseFormula(column) : column);
  // A quoted empty cell is the empty string, a bare one null, as csv-writer wrote them.
  const table: Cell[][] =
    text.trim() === ''
      ? []
      : parse(text, {
          relax_column_count: true,
          cast: (value, context) => (value === '' && !context.quoting ? null : value),
        });
  let header: string[] | undefined = table[0]?.map((c) => c ?? '');
  if (header !== undefined && DOCUMENT_COLUMNS.some((c, i) => header?.[i] !== c)) {
    throw new ExtractError(
      'usage',
      `${path} holds a CSV of other columns (${header.slice(0, 3).join(', ')}…), not records: extract appends only under its own header (${DOCUMENT_COLUMNS.join(', ')}, …) and never replaces a file it did not make; name a new file, or move this one away`,
    );
  }
  const at = (name: string): number => header?.indexOf(name) ?? -1;
  const rows = table.slice(1).map((row) => ({
    file: row[at('file')] ?? '',
    document_id: row[at('document_id')] ?? null,
  }));
  return {
    rows,
    async append(records, explode, warn) {
      const flat = flattenRecords(records, explode);
      for (const w of flat.warnings) warn(w);
      // A field is known by the form its name has in the header.
      const known = new Set(header);
      const fresh = flat.columns.filter((c) => !known.has(nameOf(c)));
      const room = Math.max(0, maxColumns - (header?.length ?? 0));
      // The cap keeps the columns seen first, as the batch's does; they go in by their siblings' order.
      const kept = new Set(_firstSeen(flat, fresh).slice(0, room));
      const added = fresh.filter((c) => kept.has(c));
      const leftOut = _leftOut(
        records,
        flat,
        fresh.filter((c) => !kept.has(c)),
        explode,
      );
      const field = new Map(flat.columns.map((c) => [nameOf(c), c]));
      const columns = [...(header ?? []), ...added.map(nameOf)];
      const body = flat.rows.map((row) => columns.map((c) => encodeCell(row.get(field.get(c) ?? c), protect)));
      if (header === undefined) {
        header = columns;
        await appendText(stringify([columns, ...body], STRINGIFY_OPTIONS));
        return { leftOut };
      }
      if (added.length === 0) {
        await appendText(stringify(body, STRINGIFY_OPTIONS));
        return { leftOut };
      }
      const old: Cell[][] = parse(await readTextOrEmpty(path), {
        relax_column_count: true,
        cast: (value, context) => (value === '' && !context.quoting ? null : value),
      });
      const padded = old.slice(1).map((row) => [...row, ...added.map(() => null)]);
      await writeFileAtomic(path, [stringify([columns, ...padded, ...body], STRINGIFY_OPTIONS)]);
      header = columns;
      return { leftOut };
    },
  };
}

/** The columns of `among` in the order the rows first have them. */
function _firstSeen(flat: FlatRows, among: readonly string[]): string[] {
  const left = new Set(among);
  const order: string[] = [];
  for (const row of flat.rows) for (const c of row.keys()) if (left.delete(c)) order.push(c);
  return [...order, ...left];
}

/** Per document, the columns past the cap it has a cell for (a row per document: no --explode). */
function _leftOut(
  records: readonly DocumentRecord[],
  flat: FlatRows,
  past: readonly string[],
  explode: string | undefined,
): FlatRows['leftOut'] {
  if (past.length === 0 || explode !== undefined) return [];
  return records.flatMap((record, i) => {
    const columns = past.filter((c) => flat.rows[i]?.has(c) === true);
    return columns.length > 0 ? [{ document_id: record.document_id, columns }] : [];
  });
}
