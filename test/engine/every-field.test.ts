import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/contract/index.ts';
import { Sheet } from '../../fixtures/lib/pdf.ts';
import { readSheet } from './read-sheet.ts';

/**
 * Every field of the built-in Invoices parser, beyond number, date and total: parties,
 * identifiers, currency, tax. Each layout is drawn here (general shapes, never a copy of a
 * corpus file); a wrong value is worse than null.
 */

const read = readSheet;

/** A table whose column header stands on three lines, its last line a tax label ("Price w/o" / "Tax"). */
function threeLineHeader(s: Sheet, lastLine: string): void {
  s.text(470, 300, 'Price w/o', { size: 9 });
  s.text(50, 306, 'Description', { size: 9 })
    .text(300, 306, 'Quantity', { size: 9 })
    .text(380, 306, 'Unit Price', { size: 9 });
  s.text(515, 312, lastLine, { size: 9 });
  s.text(50, 330, 'Nougat 250g', { size: 9 })
    .text(300, 330, '8 Unit(s)', { size: 9 })
    .text(380, 330, '4.55 €', { size: 9 })
    .right(540, 330, '32.76 €', { size: 9 });
  s.text(50, 348, 'Biscuits 300g', { size: 9 })
    .text(300, 348, '20 Unit(s)', { size: 9 })
    .text(380, 348, '3.20 €', { size: 9 })
    .right(540, 348, '64.00 €', { size: 9 });
}

describe('every field: precision', () => {
  it('engine: the last line of a column header ("Tax", "USt.", "MwSt.") is no label for the row below', async () => {
    for (const last of ['Tax', 'USt.', 'MwSt.']) {
      const s = new Sheet();
      s.text(50, 40, 'Invoice FA-2017-0008', { size: 16 });
      threeLineHeader(s, last);
      s.text(400, 400, 'Total').right(540, 400, '96.76 €');
      const results = await read(s);
      expect(results.tax, last).toBeNull();
      expect(results.total, last).toBe(96.76);
    }
  });

  it('engine: a value stops at its cell: "IBAN : FR76 … 189 - BIC : BREDFRPP" is the IBAN alone', async () => {
    const s = new Sheet();
    s.text(50, 100, 'IBAN : FR76 3000 6000 0112 3456 7890 189 - BIC : BREDFRPP - Bank: Banque Populaire');
    expect(await read(s, [{ name: 'iban', type: 'string' }])).toEqual({ iban: 'FR76 3000 6000 0112 3456 7890 189' });
  });

  it('engine: an IBAN whose checksum fails is no IBAN', async () => {
    const s = new Sheet();
    s.text(50, 100, 'IBAN: FR76 3000 6000 0112 3456 7890 188');
    expect(await read(s, [{ name: 'iban', type: 'string' }])).toEqual({ iban: null });
  });

  it('engine: a label word alone is never a name ("Nummer : 549910", "Ship To:", "Customer:2")', async () => {
    const fields: FieldDefinition = [
      { name: 'seller_name', type: 'string', label: 'Verkäufer' },
      { name: 'buyer_name', type: 'string', label: 'Customer' },
      { name: 'bill_to_name', type: 'string', label: 'Bill To' },
    ];
    const s = new Sheet();
    s.text(70, 170, 'Verkäufer:');
    s.text(70, 187, 'Nummer : 549910');
    s.text(70, 300, 'Customer:2');
    s.text(300, 300, 'Bill To');
    s.text(300, 315, 'Ship To:');
    expect(await read(s, fields)).toEqual({ seller_name: null, buyer_name: null, bill_to_name: null });
  });
});

describe('every field: parties', () => {
  it('engine: seller and buyer blocks headed "Verkäufer" and "Käufer" give names and the VAT id', async () => {
    const s = new Sheet();
    s.text(65, 64, 'Handelsrechnung Nr. 471102 vom 05.03.2018', { size: 14 });
    s.text(70, 170, 'Verkäufer');
    s.text(70, 187, 'Nummer:').text(260, 187, '549910');
    s.text(70, 205, 'Name:').text(260, 205, 'Lieferant GmbH');
    s.text(70, 223, 'Anschrift:').text(260, 223, 'Lieferantenstraße 20');
    s.text(70, 241, 'USt.-Id.-Nr.:').text(260, 241, 'DE123456789');
    s.text(70, 300, 'Käufer/Leistungsempfänger');
    s.text(70, 317, 'Nummer:').text(260, 317, 'GE2020211');
    s.text(70, 335, 'Name:').text(260, 335, 'Kunden AG Mitte');
    s.text(70, 353, 'Anschrift:').text(260, 353, 'Kundenstraße 15');
    const results = await read(s);
    expect(results.vendor).toMatchObject({ name: 'Lieferant GmbH', vat_id: 'DE123456789' });
    expect(results.bill_to).toMatchObject({ name: 'Kunden AG Mitte' });
  });

  it('engine: a block headed "Seller:" / "Bill To:" opens with the party\'s name', async () => {
    const s = new Sheet();
    s.text(50, 40, 'INVOICE', { size: 20 });
    s.text(50, 100, 'Seller:').text(320, 100, 'Bill To:');
    s.text(50, 114, 'Acme Tools Ltd.').text(320, 114, 'Globex Corporation');
    s.text(50, 128, '12 High Street').text(320, 128, '500 Main Street');
    s.text(50, 142, 'London EC1A 1BB').text(320, 142, 'Springfield, IL 62701');
    s.text(50, 156, 'VAT No: GB 123 4567 89');
    const results = await read(s);
    expect(results.vendor).toMatchObject({ name: 'Acme Tools Ltd.', vat_id: 'GB 123 4567 89' });
    expect(results.bill_to).toMatchObject({ name: 'Globex Corporation' });
  });

  it('engine: a VAT id of the wrong format for its country is no VAT id', async () => {
    const s = new Sheet();
    s.text(50, 100, 'Seller:');
    s.text(50, 114, 'Acme Tools Ltd.');
    s.text(50, 128, 'VAT No: DE 1234');
    expect((await read(s)).vendor).toMatchObject({ name: 'Acme Tools Ltd.', vat_id: null });
  });
});

describe('every field: currency', () => {
  it('engine: the currency from the marks of the amounts when they all name one', async () => {
    const a = new Sheet();
    a.text(50, 100, 'Subtotal').right(540, 100, '473,00 €');
    a.text(50, 120, 'Total').right(540, 120, '529,87 €');
    expect((await read(a)).currency).toBe('EUR');
    const b = new Sheet();
    b.text(50, 100, 'Subtotal').right(540, 100, 'EUR 473.00');
    b.text(50, 120, 'Total').right(540, 120, '£529.87');
    expect((await read(b)).currency).toBeNull();
    const c = new Sheet();
    c.text(50, 120, 'Total').right(540, 120, '$529.87');
    expect((await read(c)).currency).toBeNull();
  });
});
