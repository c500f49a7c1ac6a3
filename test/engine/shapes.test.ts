import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/contract/index.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { extractInProcess } from '../../src/engine/extract.ts';
import { type Col, Sheet, drawTable, renderPdf } from '../../fixtures/lib/pdf.ts';

/**
 * Shapes of real invoices, drawn here with pdfkit so that the rules are tested on layouts
 * and wordings that the fixtures and the corpus do not hold (English vendors, other
 * generators): each rule is general, and a wrong value is worse than null.
 */

async function read(sheet: Sheet, fields: FieldDefinition = INVOICE_FIELDS) {
  const bytes = await renderPdf([sheet]);
  return extractInProcess({ bytes: new Uint8Array(bytes), mimeType: 'application/pdf', fields });
}

const USER: FieldDefinition = [
  { name: 'invoice_number', type: 'string' },
  { name: 'date', type: 'date' },
  { name: 'total', type: 'decimal' },
];

describe('engine on shapes of real invoices', () => {
  it('engine: "Invoice Total: $101.00", "August 3 , 2014" and a payment table with a Date column', async () => {
    const s = new Sheet();
    s.text(50, 40, 'INVOICE', { size: 20, bold: true });
    s.text(50, 80, 'Invoice #: 10042').text(330, 80, 'Date: August 3 , 2014');
    s.text(330, 200, 'Invoice Total: $101.00');
    const cols: Col[] = [
      { x: 50, header: 'Payment' },
      { x: 200, header: 'Date' },
      { x: 400, header: 'Amount', right: true },
    ];
    drawTable(s, 260, cols, [['Visa ending 4242', '08/10/2014', '$101.00']]);
    s.text(330, 330, 'Balance Due: $0.00');
    const { results } = await read(s);
    expect(results).toMatchObject({ invoice_number: '10042', invoice_date: '2014-08-03', total: 101 });
  });

  it('engine: "Amount Due" alone is the total; "Total for this invoice" when nothing else names it', async () => {
    const a = new Sheet();
    a.text(50, 50, 'Invoice No. A-77').text(50, 120, 'Amount Due').right(540, 120, 'USD 1,939.00');
    expect((await read(a)).results).toMatchObject({ invoice_number: 'A-77', total: 1939 });
    const b = new Sheet();
    b.text(50, 50, 'Statement').text(50, 120, 'Total for this invoice').right(540, 120, '$4.11');
    expect((await read(b, USER)).results.total).toBe(4.11);
  });

  it('engine: "Total EUR │ 34,73", "Rs 1939" and "₹ 1,939.50" are amounts', async () => {
    const a = new Sheet();
    a.text(50, 120, 'Total EUR').right(540, 120, '34,73');
    expect((await read(a)).results.total).toBe(34.73);
    const b = new Sheet();
    b.text(50, 120, 'Grand Total:').right(540, 120, 'Rs 1939');
    expect((await read(b)).results).toMatchObject({ total: 1939, currency: null });
    // The standard PDF fonts cannot draw ₹: a text document carries it.
    const text = await extractInProcess({
      bytes: new TextEncoder().encode('Grand Total:      ₹ 1,939.50\n'),
      mimeType: 'text/plain',
      fields: INVOICE_FIELDS,
    });
    // ₹ names one currency: the amounts' marks give it (every-field.test.ts); "Rs" names several.
    expect(text.results).toMatchObject({ total: 1939.5, currency: 'INR' });
  });

  it('engine: dates as invoices print them: "3. März 2024", "13 nov. 2017"', async () => {
    const a = new Sheet();
    a.text(50, 50, 'Rechnungsdatum: 3. März 2024');
    expect((await read(a)).results.invoice_date).toBe('2024-03-03');
    const b = new Sheet();
    b.text(50, 50, 'Date de facture').text(200, 50, '13 nov. 2017');
    expect((await read(b)).results.invoice_date).toBe('2017-11-13');
  });

  it('engine: cuts a clause after an identifier and takes its date ("issued at", "vom", "du")', async () => {
    for (const [line, number, date] of [
      ['Invoice # RE-20201121/508 issued at 2020-11-21', 'RE-20201121/508', '2020-11-21'],
      ['Rechnung Nr. 471102 vom 05.03.2018', '471102', '2018-03-05'],
      ['Facture N° FA-12 du 13/11/2017', 'FA-12', '2017-11-13'],
      ['Mietrechnung (387) Nr. 9314110911/00/M/00/N vom 01.10.2018', '9314110911/00/M/00/N', '2018-10-01'],
    ] as const) {
      const s = new Sheet();
      s.text(50, 50, line);
      expect((await read(s)).results, line).toMatchObject({ invoice_number: number, invoice_date: date });
    }
  });

  it('engine: reads a label the PDF text cuts with a space ("Br uttosumme", "Zahlbetr ag"); two real words stay two', async () => {
    const s = new Sheet();
    // Helvetica 10 pt: "Br" is 10 pt wide; the next piece starts 1.5 pt after it (kerning, not a space).
    s.text(50, 120, 'Br').text(61.5, 120, 'uttosumme').right(540, 120, '529,87');
    s.text(50, 150, 'Zahlbetr')
      .text(50 + 37.79 + 1.5, 150, 'ag')
      .right(540, 150, '529,87');
    expect((await read(s)).results.total).toBe(529.87);
    const t = new Sheet();
    // A real word space (2.78 pt) stays a space: "Net" and "total" are two words.
    t.text(50, 120, 'Net')
      .text(50 + 17.23 + 2.78, 120, 'total:')
      .right(540, 120, '10.00');
    expect((await read(t)).results).toMatchObject({ subtotal: 10, total: null });
  });

  it('engine: a totals row with several numbers gives the amount its arithmetic supports, or null', async () => {
    const a = new Sheet();
    a.text(50, 120, 'Total').text(300, 120, '1').right(540, 120, '571.04');
    expect((await read(a)).results.total).toBe(571.04);
    const b = new Sheet();
    b.text(50, 120, 'Total').text(250, 120, '3').right(400, 120, '12.50').right(540, 120, '99.00');
    expect((await read(b)).results.total).toBeNull();
    const c = new Sheet();
    c.text(50, 120, 'Total').right(300, 120, '100.00').right(400, 120, '19.00').right(540, 120, '119.00');
    expect((await read(c)).results.total).toBe(119);
  });

  it('engine: a column header is no key (Total over a row of the items table)', async () => {
    const s = new Sheet();
    const cols: Col[] = [
      { x: 50, header: 'Qty' },
      { x: 120, header: 'Item' },
      { x: 330, header: 'MRP' },
      { x: 540, header: 'Total', right: true },
    ];
    drawTable(s, 100, cols, [['1', 'Phone case', '199.00', '199.00']]);
    expect((await read(s, USER)).results.total).toBeNull();
  });

  it('engine: a grand total and an amount due that disagree: the total when the deposit is printed, else null', async () => {
    const a = new Sheet();
    a.text(330, 100, 'Total TTC').right(540, 100, '671,15 €');
    a.text(330, 114, 'Acompte versé').right(540, 114, '201,00 €');
    a.text(330, 128, 'Solde à payer').right(540, 128, '470,15 €');
    expect((await read(a)).results.total).toBe(671.15);
    const b = new Sheet();
    b.text(330, 100, 'Grand Total:').right(540, 100, '671.15');
    b.text(330, 128, 'Balance Due:').right(540, 128, '470.15');
    expect((await read(b)).results.total).toBeNull();
  });

  it('engine: a date label with extra words beside another date vetoes the answer', async () => {
    const s = new Sheet();
    s.text(50, 50, 'Date: 2024-03-01');
    s.text(50, 64, 'Date of service: 2024-02-20');
    expect((await read(s)).results.invoice_date).toBeNull();
  });

  it('engine: a sentence that opens with a label word grounds nothing ("Due to global inflation…")', async () => {
    const s = new Sheet();
    s.text(50, 50, 'Due Date: 2024-04-01');
    s.text(50, 80, 'Due to global inflation, prices may change');
    expect((await read(s)).results.due_date).toBe('2024-04-01');
  });

  it('engine: a table ends at its totals and skips section titles ("--- Non Food ---", "Tax: 0.2%")', async () => {
    const s = new Sheet();
    const cols: Col[] = [
      { x: 50, header: 'Description' },
      { x: 330, header: 'Qty', right: true },
      { x: 440, header: 'Unit Price', right: true },
      { x: 540, header: 'Amount', right: true },
    ];
    const y = drawTable(s, 100, cols, [
      ['--- Non Food ---'],
      ['Chair', '2', '40.00', '80.00'],
      ['Lamp', '1', '25.00', '25.00'],
    ]);
    s.text(50, y, 'Tax: 0.2%');
    s.text(50, y + 14, 'Delivery notes: leave at the door');
    const { results } = await read(s);
    expect(results.line_items).toEqual([
      { description: 'Chair', quantity: 2, unit_price: 40, amount: 80 },
      { description: 'Lamp', quantity: 1, unit_price: 25, amount: 25 },
    ]);
  });

  it('engine: the grounding gives each value its page and box, where the value is drawn', async () => {
    const s = new Sheet();
    s.text(50, 50, 'Invoice Number: INV-9').text(330, 120, 'Total:').right(540, 120, '12.50');
    const out = await read(s);
    expect(out.results.total).toBe(12.5);
    const place = out.grounding.total;
    expect(place?.page).toBe(1);
    const [x0 = 0, top = 0, x1 = 0, bottom = 0] = place?.box ?? [];
    expect(x1).toBeCloseTo(540, 0);
    expect(x0).toBeGreaterThan(480);
    expect(top).toBeLessThan(125);
    expect(bottom).toBeGreaterThan(125);
    expect(out.grounding.invoice_number?.box[0]).toBeGreaterThanOrEqual(50);
    expect(out.grounding.due_date).toBeUndefined();
  });
});
