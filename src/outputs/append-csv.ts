import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { readTextOrEmpty, writeFileAtomic } from './atomic.ts';
import { encodeCell, neutraliseFormula } from './csv.ts';
import { flattenRecords } from './flatten.ts';
import type { DocumentRecord } from './record.ts';

/**
 * A CSV file that grows as documents complete (`extract watch -o FILE.csv`), with one header.
 * Loaded only for a CSV output (csv-parse and csv-stringify with it). The header is the columns
 * of the first records written; a record that brings a column the header lacks (the first
 * completed document after failures, which have no results) makes the file be rewritten once,
 * atomically, with that column added at the end and empty cells in the rows before.
 */

// As csv-writer.ts: only the empty string is quoted on purpose, null cells stay bare.
const STRINGIFY_OPTIONS = { quoted_match: /^$/ } as const;

export type CsvFile = {
  /** The (file, document_id) of each row already in the file. */
  rows: Array<{ file: string; document_id: string | null }>;
  append(records: readonly DocumentRecord[], explode: string | undefined, warn: (m: string) => void): Promise<void>;
};

type Cell = string | null;

export async function openCsvFile(path: string, appendText: (text: string) => Promise<void>): Promise<CsvFile> {
  const text = await readTextOrEmpty(path);
  // A quoted empty cell is the empty string, a bare one null, as csv-writer wrote them.
  const table: Cell[][] =
    text.trim() === ''
      ? []
      : parse(text, {
          relax_column_count: true,
          cast: (value, context) => (value === '' && !context.quoting ? null : value),
        });
  let header: string[] | undefined = table[0]?.map((c) => c ?? '');
  const at = (name: string): number => header?.indexOf(name) ?? -1;
  const rows = table.slice(1).map((row) => ({
    file: row[at('file')] ?? '',
    document_id: row[at('document_id')] ?? null,
  }));
  // The file may end without a newline (a crash mid-write): the next row must not join it.
  let needsNewline = text !== '' && !text.endsWith('\n');
  return {
    rows,
    async append(records, explode, warn) {
      const flat = flattenRecords(records, explode);
      for (const w of flat.warnings) warn(w);
      if (header === undefined) {
        header = flat.columns;
        const body = flat.rows.map((row) => flat.columns.map((c) => encodeCell(row.get(c))));
        await appendText(stringify([flat.columns.map(neutraliseFormula), ...body], STRINGIFY_OPTIONS));
        return;
      }
      const known = new Set(header);
      const added = flat.columns.filter((c) => !known.has(c));
      const columns: string[] = [...header, ...added];
      const body = flat.rows.map((row) => columns.map((c) => encodeCell(row.get(c))));
      if (added.length === 0) {
        const prefix = needsNewline ? '\n' : '';
        needsNewline = false;
        await appendText(prefix + stringify(body, STRINGIFY_OPTIONS));
        return;
      }
      const old: Cell[][] = parse(await readTextOrEmpty(path), {
        relax_column_count: true,
        cast: (value, context) => (value === '' && !context.quoting ? null : value),
      });
      const padded = old.slice(1).map((row) => [...row, ...added.map(() => null)]);
      await writeFileAtomic(path, [
        stringify([[...header, ...added.map(neutraliseFormula)], ...padded, ...body], STRINGIFY_OPTIONS),
      ]);
      header = columns;
      needsNewline = false;
    },
  };
}
