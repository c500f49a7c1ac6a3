import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/contract/index.ts';
import { mirrorsDefinition } from '../../src/contract/index.ts';
import { groundLayout } from '../../src/engine/extract.ts';
import { type TextPiece, layoutPage, layoutText } from '../../src/engine/layout.ts';

const piece = (text: string, x: number, y: number, width = text.length * 5): TextPiece => ({
  text,
  x,
  y,
  width,
  height: 10,
});

describe('engine layout', () => {
  it('engine: assembles lines by position, not by drawing order', () => {
    const page = layoutPage(1, [
      piece('12.00', 300, 100),
      piece('Total:', 50, 100.5),
      piece('Invoice Number: 7', 50, 80),
    ]);
    expect(page.lines.map((l) => l.cells.map((c) => c.text))).toEqual([['Invoice Number: 7'], ['Total:', '12.00']]);
  });

  it('engine: joins close pieces into one cell and splits distant ones', () => {
    const page = layoutPage(1, [piece('Invoice', 50, 10, 35), piece('No.', 88, 10, 15), piece('A-1', 200, 10)]);
    expect(page.lines[0]?.cells.map((c) => c.text)).toEqual(['Invoice No.', 'A-1']);
  });

  it('engine: lays out a text document with cells split by two spaces', () => {
    const layout = layoutText('Total:   12.00\n\nName: Acme  Co\tX');
    expect(layout.pages[0]?.lines.map((l) => l.cells.map((c) => c.text))).toEqual([
      ['Total:', '12.00'],
      ['Name: Acme', 'Co', 'X'],
    ]);
  });
});

const fields: FieldDefinition = [
  { name: 'invoice_number', type: 'string' },
  { name: 'total', type: 'decimal' },
  { name: 'due_date', type: 'date' },
  { name: 'customer', type: 'object', label: 'Bill To', fields: [{ name: 'name', type: 'string' }] },
  {
    name: 'items',
    type: 'table',
    columns: [
      { name: 'description', type: 'string' },
      { name: 'qty', type: 'integer', aliases: ['Qty'] },
      { name: 'amount', type: 'decimal' },
    ],
  },
];
const ground = (text: string) => groundLayout(layoutText(text), fields).results;

describe('engine grounding', () => {
  it('engine: finds a value after its label and below it', () => {
    expect(ground('Invoice Number: A-1\nTotal:  5.00').invoice_number).toBe('A-1');
    expect(ground('Invoice Number    Due Date\nA-2               2024-05-01')).toMatchObject({
      invoice_number: 'A-2',
      due_date: '2024-05-01',
    });
  });

  it('engine: gives null for an absent field, a value that does not parse, or two different values', () => {
    expect(ground('nothing here').total).toBeNull();
    expect(ground('Total: about ten').total).toBeNull();
    expect(ground('Total: 10.00\n\nTotal: 12.00').total).toBeNull();
    expect(ground('Total: 10.00\n\nTotal: 10.00').total).toBe(10);
    expect(ground('Net 30').total).toBeNull();
  });

  it('engine: never reads "Invoice Number   X" over "Reference   Y" as either', () => {
    expect(ground('Invoice Number   A-1\nReference        R-7').invoice_number).toBeNull();
  });

  it('engine: takes the value to the right of a bare label when the cell below is no value of the type', () => {
    expect(ground('Total        10.00\nTerms: Net 30').total).toBe(10);
    expect(ground('Total        10.00\n12.00').total).toBeNull();
  });

  it('engine: scopes the fields of an object to the block under its heading', () => {
    const r = ground('Vendor                 Bill To\nName: Seller           Name: Buyer\n\nName: Elsewhere');
    expect(r.customer).toEqual({ name: 'Buyer' });
  });

  it('engine: reads a table in any column order with multi-line cells, stopping at Total', () => {
    const r = ground(
      [
        'Amount   Description        Qty',
        '  5.00   Pens                 5',
        '         blue ink',
        ' 12.50   Paper                1',
        'Total: 17.50',
      ].join('\n'),
    );
    expect(r.items).toEqual([
      { description: 'Pens blue ink', qty: 5, amount: 5 },
      { description: 'Paper', qty: 1, amount: 12.5 },
    ]);
    expect(r.total).toBe(17.5);
    expect(mirrorsDefinition(fields, r)).toEqual({ ok: true });
  });

  it('engine: gives null (not []) for a table that is not there, and null for a missing cell', () => {
    expect(ground('Total: 1.00').items).toBeNull();
    expect(ground('Description    Amount\nPens             2.00\nTape').items).toEqual([
      { description: 'Pens Tape', qty: null, amount: 2 },
    ]);
    expect(ground('Description    Qty   Amount\nPens                 2.00\n').items).toEqual([
      { description: 'Pens', qty: null, amount: 2 },
    ]);
  });
});
