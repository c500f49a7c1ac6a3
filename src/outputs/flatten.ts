import type { LeafValue, ResultValue, Results } from '../contract/index.ts';
import { type DocumentRecord, RECORD_KEYS, recordFields } from './record.ts';

/**
 * Turns records into flat rows for CSV: one row per document, or one per row of an
 * exploded table. Column names are the union over all records in first-seen order, since
 * the client sees only results, never the parser's Field definition; a column first seen
 * in a later record joins its siblings (`customer.email` after `customer.name`) so an
 * Object or Table field stays together.
 */

/**
 * The columns every row starts with, before the fields of the results: the record's own keys
 * but `results` (its fields are the columns that follow) and `route` (never a CSV column: the
 * columns are what users' spreadsheets already read).
 */
export const DOCUMENT_COLUMNS = RECORD_KEYS.filter(
  (key): key is Exclude<keyof DocumentRecord, 'results' | 'route'> => key !== 'results' && key !== 'route',
);

/** A cell before CSV encoding. Tables not exploded travel as their JSON text. */
export type Cell = LeafValue;

export type FlatRows = {
  columns: string[];
  rows: Map<string, Cell>[];
  /** Things the reader should know, such as an --explode path no document has a table at. */
  warnings: string[];
  /** With `maxColumns`: per document, the columns it has that the cap left out (in first-seen order). */
  leftOut: Array<{ document_id: string | null; columns: string[] }>;
};

/**
 * `maxColumns` caps the columns (document columns included): the first ones seen are kept, in
 * the order above; a column first seen past the cap is left out of every row and reported in
 * `leftOut`, so a record of thousands of distinct fields cannot make every row that wide.
 */
export function flattenRecords(records: Iterable<DocumentRecord>, explode?: string, maxColumns?: number): FlatRows {
  const flattener = createFlattener(explode, maxColumns);
  const leftOut: FlatRows['leftOut'] = [];
  const rows: Map<string, Cell>[] = [];
  for (const record of records) {
    const flat = flattener.add(record);
    if (flat.left.length > 0) leftOut.push({ document_id: record.document_id, columns: flat.left });
    rows.push(...flat.rows);
  }
  return { columns: flattener.columns(), rows, warnings: explodeWarnings(flattener, explode, records), leftOut };
}

/** What to tell the reader once every record went through `flattener`: an --explode path no document has a table at. */
export function explodeWarnings(
  flattener: Flattener,
  explode: string | undefined,
  records: Iterable<DocumentRecord>,
): string[] {
  if (explode === undefined || flattener.explodeSeen()) return [];
  const wrongKinds = flattener.wrongKinds();
  const found = wrongKinds.length > 0 ? ` (it holds ${wrongKinds.join(' or ')})` : '';
  const tables = listTablePaths(records);
  const hint = tables.length > 0 ? `the tables are: ${tables.join(', ')}` : 'no document has a table';
  return [`--explode ${explode}: no document has a table there${found}; ${hint}`];
}

/**
 * Flattens one record at a time, the columns growing as records are added: what flattenRecords
 * does over an array, for a caller that streams records (two passes: one to learn the columns,
 * one to write the rows, each record's rows then built against columns that no longer grow).
 */
export type Flattener = {
  /** The record's rows, and the columns it has that the cap left out. */
  add(record: DocumentRecord): { rows: Map<string, Cell>[]; left: string[] };
  columns(): string[];
  explodeSeen(): boolean;
  wrongKinds(): string[];
};

/**
 * `keep`: the columns an existing output already has after the document columns (its header),
 * in their order: they stay where they are, present or not in these records, and a column they
 * lack is added at the right of them, so a file's columns never move or go from one run to the next.
 */
export function createFlattener(explode?: string, maxColumns?: number, keep: readonly string[] = []): Flattener {
  // The document columns lead whatever a header held (a name met twice is one column).
  const columns = new _ColumnOrder([...DOCUMENT_COLUMNS, ...keep], maxColumns);
  let explodeSeen = false;
  const wrongKinds = new Set<string>();
  return {
    add(record) {
      const fields = recordFields(record);
      const base = new Map<string, Cell>(DOCUMENT_COLUMNS.map((column) => [column, fields[column] ?? null]));
      let tableRows: Map<string, Cell>[] = [];
      const left: string[] = [];
      const visit = (value: ResultValue, path: string): void => {
        if (explode !== undefined && path === explode) {
          if (Array.isArray(value)) {
            explodeSeen = true;
            tableRows = value.map((row: ResultValue) => _explodedRow(row, path, columns));
            return;
          }
          if (value === null) return;
          wrongKinds.add(typeof value === 'object' ? 'an object' : `a ${typeof value}`);
        }
        if (_isResults(value)) {
          for (const [key, child] of Object.entries(value)) visit(child, `${path}.${key}`);
          return;
        }
        const column = _columnName(path);
        if (columns.add(column)) base.set(column, Array.isArray(value) ? JSON.stringify(value) : value);
        else left.push(column);
      };
      for (const [key, value] of Object.entries(record.results ?? {})) visit(value, key);
      // A document whose table is empty (or that has no results) still gets its one row.
      const rows = tableRows.length === 0 ? [base] : tableRows.map((tableRow) => new Map([...base, ...tableRow]));
      return { rows, left };
    },
    columns: () => columns.list(),
    explodeSeen: () => explodeSeen,
    wrongKinds: () => [...wrongKinds],
  };
}

/** Dotted paths of every Table field seen in the records, for messages about --explode. */
export function listTablePaths(records: Iterable<DocumentRecord>): string[] {
  const found = new Set<string>();
  const visit = (value: ResultValue, path: string): void => {
    if (Array.isArray(value)) found.add(path);
    else if (_isResults(value)) for (const [key, child] of Object.entries(value)) visit(child, `${path}.${key}`);
  };
  for (const record of records) for (const [key, value] of Object.entries(record.results ?? {})) visit(value, key);
  return [...found];
}

function _explodedRow(row: ResultValue, path: string, columns: _ColumnOrder): Map<string, Cell> {
  const cells = new Map<string, Cell>();
  // The spec says a row is an object of column values; anything else is kept whole, not lost.
  if (!_isResults(row)) {
    const column = _columnName(path);
    if (columns.add(column)) cells.set(column, Array.isArray(row) ? JSON.stringify(row) : row);
    return cells;
  }
  for (const [key, value] of Object.entries(row)) {
    const column = _columnName(`${path}.${key}`);
    if (columns.add(column))
      cells.set(column, value !== null && typeof value === 'object' ? JSON.stringify(value) : value);
  }
  return cells;
}

/** A results field named like a document column ("status") must not overwrite it. */
function _columnName(path: string): string {
  return (DOCUMENT_COLUMNS as readonly string[]).includes(path) ? `results.${path}` : path;
}

function _isResults(value: ResultValue): value is Results {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An ordered set of column names that inserts a new name after its closest relatives. */
class _ColumnOrder {
  readonly #names: string[];
  readonly #seen: Set<string>;
  readonly #max: number;
  /** The columns given at first, which keep their places: a new one is grouped only among those after them. */
  readonly #fixed: number;
  constructor(initial: readonly string[], max = Number.POSITIVE_INFINITY) {
    this.#names = [...new Set(initial)];
    this.#seen = new Set(initial);
    this.#max = Math.max(max, this.#names.length);
    this.#fixed = this.#names.length;
  }
  /** Whether `name` is a column (already, or added now); false when the cap leaves it out. */
  add(name: string): boolean {
    if (this.#seen.has(name)) return true;
    if (this.#names.length >= this.#max) return false;
    this.#seen.add(name);
    for (let cut = name.lastIndexOf('.'); cut > 0; cut = name.lastIndexOf('.', cut - 1)) {
      const prefix = name.slice(0, cut + 1);
      const last = this.#names.findLastIndex((n) => n.startsWith(prefix));
      if (last >= this.#fixed) {
        this.#names.splice(last + 1, 0, name);
        return true;
      }
    }
    this.#names.push(name);
    return true;
  }
  list(): string[] {
    return [...this.#names];
  }
}
