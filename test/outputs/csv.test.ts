import { describe, expect, it } from 'vitest';
import { encodeCell, neutraliseFormula } from '../../src/outputs/csv.ts';
import { csvChunks } from '../../src/outputs/csv-writer.ts';
import type { DocumentRecord } from '../../src/outputs/record.ts';
import { SAMPLE, readCsv, readCsvObjects, record } from './helpers.ts';

function csv(records: DocumentRecord[], explode?: string, warnings: string[] = []): string {
  return [...csvChunks(records, { explode }, (w) => warnings.push(w))].join('');
}

describe('csv', () => {
  it('csv: one row per document, document columns first, then leaves with objects flattened parent.child', () => {
    const [header, ...rows] = readCsv(csv(SAMPLE));
    expect(header).toEqual([
      'file',
      'document_id',
      'status',
      'page_count',
      'error',
      'needs_review',
      'invoice_number',
      'total',
      'paid',
      'due_date',
      'customer.name',
      'customer.address.city',
      'customer.address.zip',
      'lines',
    ]);
    expect(rows).toHaveLength(3);
  });

  it('csv: null is an empty cell, never 0', () => {
    const text = csv([record({ results: { total: null, count: 0 } })]);
    const [row] = readCsvObjects(text);
    expect(row?.total).toBeNull();
    expect(row?.count).toBe('0');
    expect(text).not.toContain('null');
    expect(text.trimEnd().split('\n')[1]).toMatch(/,,0$/);
  });

  it('csv: an empty string is a quoted empty cell, distinguishable from null', () => {
    const text = csv([record({ results: { empty: '', missing: null } })]);
    expect(text.trimEnd().split('\n')[1]).toMatch(/,"",$/);
    const [row] = readCsvObjects(text);
    expect(row?.empty).toBe('');
    expect(row?.missing).toBeNull();
  });

  it('csv: a failed document keeps its row, with its error and empty result cells', () => {
    const rows = readCsvObjects(csv(SAMPLE));
    expect(rows[2]).toMatchObject({
      file: 'invoices/c.pdf',
      document_id: null,
      status: 'error',
      page_count: null,
      error: 'the file is not a PDF',
      invoice_number: null,
    });
  });

  it('csv: numbers stay numbers, a negative number is not neutralised, booleans are true/false', () => {
    const [row] = readCsvObjects(csv([record({ results: { amount: -12.5, big: 1e21, yes: true, no: false } })]));
    expect(row).toMatchObject({ amount: '-12.5', big: '1e+21', yes: 'true', no: 'false' });
  });

  it.each(['=1+2', '+33 1 23', '-12.5', '@SUM(A1)', '\tx', '\rx', '\uFF1D1'])(
    'csv: neutralises the formula-leading string %j',
    (text) => {
      const [row] = readCsvObjects(csv([record({ results: { note: text } })]));
      expect(row?.note).toBe(`'${text}`);
    },
  );

  it('csv: neutralises the file name, the error text and a formula-like header', () => {
    const [header, row] = readCsv(
      csv([
        record({ file: '=cmd.pdf', status: 'error', results: null, error: '-bad' }),
        record({ results: { '=x': 'y' } }),
      ]),
    );
    expect(row?.[0]).toBe("'=cmd.pdf");
    expect(row?.[4]).toBe("'-bad");
    expect(header?.at(-1)).toBe("'=x");
  });

  it('csv: other strings are left exactly as they are', () => {
    for (const text of ['plain', "'quoted", 'a,b', 'say "hi"', 'two\nlines', ' lead space', '1=1']) {
      expect(neutraliseFormula(text)).toBe(text);
    }
    expect(encodeCell(null)).toBeNull();
    expect(encodeCell(Number.NaN)).toBeNull();
  });

  it('csv: a table is JSON text in one cell when not exploded', () => {
    const rows = readCsvObjects(csv(SAMPLE));
    const first = rows[0]?.lines;
    expect(first).toBeTypeOf('string');
    expect(JSON.parse(first ?? '')).toEqual(SAMPLE[0]?.results?.lines);
    expect(rows[1]?.lines).toBe('[]');
  });

  it('csv: --explode gives one row per table row with the document columns repeated', () => {
    const warnings: string[] = [];
    const [header, ...rows] = readCsv(csv(SAMPLE, 'lines', warnings));
    expect(warnings).toEqual([]);
    expect(header).toEqual([
      'file',
      'document_id',
      'status',
      'page_count',
      'error',
      'needs_review',
      'invoice_number',
      'total',
      'paid',
      'due_date',
      'customer.name',
      'customer.address.city',
      'customer.address.zip',
      'lines.description',
      'lines.qty',
      'lines.amount',
    ]);
    const objects = readCsvObjects(csv(SAMPLE, 'lines'));
    expect(objects.map((r) => [r.document_id, r['lines.description'], r['lines.qty'], r['lines.amount']])).toEqual([
      ['doc_a', 'Widget', '2', '10'],
      ['doc_a', `'=HYPERLINK("x")`, null, '-12.5'],
      ['doc_b', null, null, null],
      [null, null, null, null],
    ]);
    expect(rows).toHaveLength(4);
    expect(objects[1]?.invoice_number).toBe('INV-1');
  });

  it('csv: a document with an empty table still gets one row when exploded', () => {
    const rows = readCsvObjects(csv([record({ results: { n: 'x', lines: [] } })], 'lines'));
    expect(rows).toEqual([expect.objectContaining({ n: 'x' })]);
  });

  it('csv: --explode takes a dotted path to a table inside an object', () => {
    const records = [record({ results: { order: { id: 'o1', lines: [{ sku: 'A' }, { sku: 'B' }] } } })];
    const rows = readCsvObjects(csv(records, 'order.lines'));
    expect(rows.map((r) => [r['order.id'], r['order.lines.sku']])).toEqual([
      ['o1', 'A'],
      ['o1', 'B'],
    ]);
  });

  it('csv: table columns are the union over rows and documents, in first-seen order', () => {
    const records = [
      record({ results: { lines: [{ a: 1 }, { a: 2, b: 'x' }] } }),
      record({ results: { extra: 'e', lines: [{ c: true }] } }),
    ];
    const [header] = readCsv(csv(records, 'lines'));
    expect(header?.slice(6)).toEqual(['lines.a', 'lines.b', 'lines.c', 'extra']);
    // lines.c is first seen after extra, but stays with its table's other columns.
  });

  it('csv: a field first seen in a later document joins its object siblings', () => {
    const records = [
      record({ results: { customer: { name: 'A' }, total: 1 } }),
      record({ results: { customer: { name: 'B', email: 'b@x.io', address: { city: 'Lyon' } }, total: 2 } }),
    ];
    const [header] = readCsv(csv(records));
    expect(header?.slice(6)).toEqual(['customer.name', 'customer.email', 'customer.address.city', 'total']);
  });

  it('csv: an --explode path with no table warns, names the tables, and keeps one row per document', () => {
    const warnings: string[] = [];
    const rows = readCsvObjects(csv(SAMPLE, 'lnes', warnings));
    expect(rows).toHaveLength(3);
    expect(warnings).toEqual(['--explode lnes: no document has a table there; the tables are: lines']);
    const onLeaf: string[] = [];
    csv(SAMPLE, 'invoice_number', onLeaf);
    expect(onLeaf[0]).toContain('it holds a string');
  });

  it('csv: a results field named like a document column does not overwrite it', () => {
    const [row] = readCsvObjects(csv([record({ results: { status: 'paid' } })]));
    expect(row).toMatchObject({ status: 'completed', 'results.status': 'paid' });
  });
});
