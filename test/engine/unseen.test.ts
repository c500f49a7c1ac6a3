import { describe, expect, it } from 'vitest';
import { Sheet } from '../../fixtures/lib/pdf.ts';
import { readSheet } from './read-sheet.ts';

/**
 * Shapes of invoices from producers the corpus does not hold, each drawn here as a small page
 * in the shape that once gave a wrong value: a name wrapped in a narrow column of two blocks
 * side by side, two order references under different wordings. Either the value is read
 * beyond doubt or it is null.
 */

const read = async (sheet: Sheet) =>
  (await readSheet(sheet)) as Record<string, unknown> & { bill_to: Record<string, unknown> };

function sideBySide(first: string, second: string, third: string): Sheet {
  const s = new Sheet();
  s.text(60, 60, 'INVOICE', { size: 18 });
  s.text(60, 110, 'Bill To:').text(180, 110, 'Ship To:').text(380, 110, 'Invoice #:').text(460, 110, 'INV-7758');
  s.text(60, 122, first).text(180, 122, first).text(380, 122, 'Due Date:').text(460, 122, '06/04/2026');
  s.text(60, 134, second).text(180, 134, 'Dock 4');
  s.text(60, 146, third).text(180, 146, '12 Industrial Way');
  s.text(300, 300, 'Total').right(540, 300, '512.75');
  return s;
}

describe('engine: invoices from producers in no folder', () => {
  it('engine: a buyer name wrapped in a narrow column ("Greenfield Hotels" over "Group") is null, not its first line', async () => {
    const wrapped = await read(sideBySide('Greenfield Hotels', 'Group', '77 Harbour Lane'));
    expect(wrapped.bill_to.name).toBeNull();
    // A long word under it ("NL241652583B01") overflows the column: it says nothing of the column's width.
    const overflow = sideBySide('Delta', 'Marine', 'Services');
    overflow.text(60, 158, '77 Harbour').text(60, 170, 'VAT ID:').text(60, 182, 'NL241652583B01');
    expect((await read(overflow)).bill_to.name).toBeNull();
    // A legal form closes the name: the line under it is not its continuation.
    const closed = await read(sideBySide('Greenfield Hotels Ltd', 'Purchasing', '77 Harbour Lane'));
    expect(closed.bill_to.name).toBe('Greenfield Hotels Ltd');
    // An address under the name is no continuation either.
    const addressed = await read(sideBySide('Greenfield Hotels', '77 Harbour Lane', 'Springfield'));
    expect(addressed.bill_to.name).toBe('Greenfield Hotels');
  });

  it('engine: "Su pedido: PO-1" and a "Pedido nº 18061" lower down disagree, so the purchase order is null', async () => {
    const s = new Sheet();
    s.text(60, 60, 'FACTURA', { size: 18 });
    s.text(350, 100, 'Factura nº').text(450, 100, '2026-249');
    s.text(350, 114, 'Su pedido').text(450, 114, 'PO-32776');
    s.text(300, 300, 'Total').right(540, 300, '1.250,00 €');
    s.text(60, 360, 'Pedido nº 18061').text(200, 360, 'Tel. +34 91 555 0182');
    expect((await read(s)).purchase_order).toBeNull();
    const alone = new Sheet();
    alone.text(350, 100, 'Factura nº').text(450, 100, '2026-249');
    alone.text(350, 114, 'Su pedido').text(450, 114, 'PO-32776');
    alone.text(300, 300, 'Total').right(540, 300, '1.250,00 €');
    expect((await read(alone)).purchase_order).toBe('PO-32776');
  });

  it('engine: "P.O. #: 4500233290" is the purchase order, and an "Order No." that differs makes it null', async () => {
    const s = new Sheet();
    s.text(350, 100, 'Invoice Number:').text(450, 100, 'INV-4904');
    s.text(350, 114, 'P.O. #:').text(450, 114, '4500233290');
    s.text(300, 300, 'Total').right(540, 300, '1,250.00');
    expect((await read(s)).purchase_order).toBe('4500233290');
    s.text(60, 360, 'Order No. 75946').text(200, 360, 'Phone 020 123 4567');
    expect((await read(s)).purchase_order).toBeNull();
  });

  it('engine: "GST 18% │ 78.22" with no base is the tax when net × rate and net + tax = total both hold; else null', async () => {
    const totals = (rows: Array<[string, string]>) => {
      const s = new Sheet();
      s.text(60, 60, 'INVOICE', { size: 18 }).text(350, 100, 'Invoice No.').text(450, 100, 'INV-7758');
      for (const [k, [label, amount]] of rows.entries())
        s.text(380, 300 + 14 * k, label).right(540, 300 + 14 * k, amount);
      return s;
    };
    const one = await read(
      totals([
        ['Subtotal', '434.53'],
        ['GST 18%', '78.22'],
        ['Invoice Total', '512.75'],
      ]),
    );
    expect(one).toMatchObject({ subtotal: 434.53, tax: 78.22, total: 512.75 });
    // The rate does not give the amount from the net (a discount or shipping between them): null.
    const off = await read(
      totals([
        ['Subtotal', '400.00'],
        ['Shipping', '20.00'],
        ['VAT 20%', '84.00'],
        ['Total', '504.00'],
      ]),
    );
    expect(off.tax).toBeNull();
    // Two rates, each its own share: no one line is the tax.
    const two = await read(
      totals([
        ['Subtotaal', '€ 200,00'],
        ['BTW 21%', '€ 21,00'],
        ['BTW 9%', '€ 9,00'],
        ['Totaal', '€ 230,00'],
      ]),
    );
    expect(two.tax).toBeNull();
  });
});
