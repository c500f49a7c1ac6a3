import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach } from 'vitest';
import type { DocumentRecord } from '../../src/outputs/record.ts';
import { needsReview } from '../../src/outputs/review.ts';

/** Reads CSV back as the writer meant it: a bare empty cell is null, a quoted one is "". */
export function readCsv(text: string): (string | null)[][] {
  const rows: unknown = parse(text, {
    cast: (value, context) => (value === '' && !context.quoting ? null : value),
    relax_column_count: false,
  });
  if (!Array.isArray(rows)) throw new Error('csv-parse returned no rows');
  return rows.map((row: unknown) => {
    if (!Array.isArray(row)) throw new Error('csv-parse returned a row that is not an array');
    return row.map((cell: unknown) => (cell === null ? null : String(cell)));
  });
}

/** CSV rows as objects keyed by the header, for readable assertions. */
export function readCsvObjects(text: string): Record<string, string | null>[] {
  const [header, ...rows] = readCsv(text);
  if (header === undefined) return [];
  return rows.map((row) => Object.fromEntries(header.map((h, i) => [h ?? '', row[i] ?? null])));
}

/** A fresh temporary directory, removed after the test. */
export function useTempDirs(): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), 'extract-outputs-'));
    made.push(dir);
    return dir;
  };
}

export function record(overrides: Partial<DocumentRecord> = {}): DocumentRecord {
  return {
    file: 'invoices/a.pdf',
    document_id: 'doc_1',
    status: 'completed',
    page_count: 2,
    results: {},
    error: null,
    route: 'inline',
    ...overrides,
  };
}

/** Two invoices and a failure, as a batch run would hand them over, in input order. */
export const SAMPLE: DocumentRecord[] = [
  record({
    file: 'invoices/2024/a.pdf',
    document_id: 'doc_a',
    results: {
      invoice_number: 'INV-1',
      total: 1234.5,
      paid: true,
      due_date: null,
      customer: { name: 'ACME', address: { city: 'Lyon', zip: null } },
      lines: [
        { description: 'Widget', qty: 2, amount: 10 },
        { description: '=HYPERLINK("x")', qty: null, amount: -12.5 },
      ],
    },
  }),
  record({
    file: 'invoices/2025/b.pdf',
    document_id: 'doc_b',
    page_count: 1,
    route: 'upload',
    results: {
      invoice_number: '',
      total: null,
      paid: false,
      due_date: '2025-01-31',
      customer: { name: null, address: { city: null, zip: '69001' } },
      lines: [],
    },
  }),
  record({
    file: 'invoices/c.pdf',
    document_id: null,
    status: 'error',
    page_count: null,
    results: null,
    error: 'the file is not a PDF',
    route: 'inline->upload',
  }),
];

/** A record as the writers write it: with `needs_review` derived from its results. */
export function asWritten(r: DocumentRecord): DocumentRecord {
  return { ...r, needs_review: needsReview(r) };
}
