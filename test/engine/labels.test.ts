import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/contract/index.ts';
import { LabelIndex } from '../../src/engine/labels.ts';
import { nameWords } from '../../src/engine/words.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';

const plain: FieldDefinition = [
  { name: 'invoice_number', type: 'string' },
  { name: 'invoice_date', type: 'date' },
  { name: 'total', type: 'decimal' },
  { name: 'subtotal', type: 'decimal' },
];

describe('engine labels', () => {
  it('engine: matches the words of a field name with number synonyms', () => {
    const labels = new LabelIndex(plain);
    for (const text of [
      'Invoice Number: 7',
      'Invoice No. 7',
      'Invoice #: 7',
      'Invoice no: 7',
      'INVOICE NR 7',
      'Invoice # 7',
    ]) {
      const m = labels.match(text);
      expect(m?.owners.has('invoice_number'), text).toBe(true);
      expect(m?.rest, text).toBe('7');
      expect(m?.kind, text).toBe('clean');
    }
  });

  it('engine: prefers the longest label', () => {
    const labels = new LabelIndex(plain);
    expect([...(labels.match('Invoice Date: 2024-01-01')?.owners ?? [])]).toEqual(['invoice_date']);
    expect([...(labels.match('Subtotal 10.00')?.owners ?? [])]).toEqual(['subtotal']);
    const inv = new LabelIndex(INVOICE_FIELDS);
    expect([...(inv.match('Tax ID: DE1')?.owners ?? [])]).toEqual(['vendor.vat_id']);
    expect([...(inv.match('Total Due: 5')?.owners ?? [])]).toEqual(['total']);
  });

  it('engine: tells a bare label, a label with a value and a loose label apart', () => {
    const labels = new LabelIndex(plain);
    expect(labels.isBareLabel('Total')).toBe(true);
    expect(labels.isBareLabel('Total:')).toBe(true);
    expect(labels.match('Tax (19%): 5')?.owners.size).toBe(0); // a label of the vocabulary that names no field here
    expect(labels.match('Total (EUR): 5')?.rest).toBe('5');
    expect(labels.match('Total 12.50')?.kind).toBe('loose');
    expect(labels.match('Totals')).toBeNull();
    expect(labels.match('Subtotaling')).toBeNull();
    expect(labels.match('Our Total: 5')).toBeNull(); // the label must open the cell
  });

  it('engine: labels by meaning: a head and a qualifier compose, in either order, in parentheses or in one word', () => {
    const labels = new LabelIndex(INVOICE_FIELDS);
    const owner = (text: string) => [...(labels.match(text)?.owners ?? [])];
    expect(owner('Net Total Amount')).toEqual(['subtotal']);
    expect(owner('Gesamtbetrag Netto:')).toEqual(['subtotal']);
    expect(owner('Total amount (net):')).toEqual(['subtotal']);
    expect(owner('Rechnungssumme Netto (excl. USt.)')).toEqual(['subtotal']);
    expect(owner('Montant total brut')).toEqual(['total']);
    expect(owner('Total amount (gross):')).toEqual(['total']);
    expect(owner('Total tax amount:')).toEqual(['tax']);
    expect(owner('Gesamtbetrag Steuer:')).toEqual(['tax']);
    expect(owner('Rechnungswährung')).toEqual(['currency']);
    expect(owner('N° BON DE COMMANDE : PO1')).toEqual(['purchase_order']);
    expect(labels.match('Steuerbetrag in EUR')?.kind).toBe('clean');
    expect(labels.match('Currency:: EUR')?.rest).toBe('EUR');
  });

  it('engine: words and a colon after a number word say whose number it is, never another label', () => {
    const labels = new LabelIndex(INVOICE_FIELDS);
    expect(labels.match('Bestellung Nr. Kunde: B123')).toMatchObject({ rest: 'B123', colon: true });
    expect(labels.match('Kunden-Nr. USt-IdNr.: DE123')?.rest).not.toBe('DE123');
  });

  it('engine: ignores case and accents, and reads a box before a label', () => {
    const labels = new LabelIndex([
      { name: 'paid', type: 'boolean' },
      { name: 'fecha', type: 'date', label: 'Fécha' },
    ]);
    expect(labels.match('FECHA: 2024-01-01')?.rest).toBe('2024-01-01');
    expect(labels.match('[x] Paid')?.box).toBe('[x]');
    expect(labels.match('☐ Paid')?.box).toBe('☐');
  });

  it('engine: splits field names into words', () => {
    expect(nameWords('invoice_number')).toEqual(['invoice', 'number']);
    expect(nameWords('dueDate')).toEqual(['due', 'date']);
  });
});
