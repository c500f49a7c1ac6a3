import { describe, expect, it } from 'vitest';
import { FieldDefinition } from '../../src/contract/index.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { extractInProcess } from '../../src/engine/extract.ts';
import { type Col, Sheet, drawTable, renderPdf } from '../../fixtures/lib/pdf.ts';

/**
 * Line items as real invoices print them, read with the built-in parser's `line_items`
 * (description, quantity, unit price, amount): the row count right, totals never an item,
 * and null, never a guessed row, when the columns cannot be told.
 */

async function read(pages: Sheet[]) {
  const bytes = await renderPdf(pages);
  return extractInProcess({ bytes: new Uint8Array(bytes), mimeType: 'application/pdf', fields: INVOICE_FIELDS });
}

const GERMAN: Col[] = [
  { x: 50, header: 'Pos.' },
  { x: 90, header: 'Bezeichnung' },
  { x: 340, header: 'Menge', right: true },
  { x: 440, header: 'Einzelpreis', right: true },
  { x: 540, header: 'Gesamt', right: true },
];

describe('engine: line items', () => {
  it('tables: German headers (Pos. / Bezeichnung / Menge / Einzelpreis / Gesamt) name the columns', async () => {
    const s = new Sheet();
    s.text(50, 50, 'Rechnung Nr. 2024-17');
    const y = drawTable(s, 120, GERMAN, [
      ['1', 'Schrauben M4', '100 Stk', '0,10', '10,00'],
      ['2', 'Dübel 6 mm', '50 Stk', '0,20', '10,00'],
      ['3', 'Montage', '2,5 Std', '48,00', '120,00'],
    ]);
    s.text(300, y + 10, 'Summe netto').right(540, y + 10, '140,00');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Schrauben M4', quantity: 100, unit_price: 0.1, amount: 10 },
      { description: 'Dübel 6 mm', quantity: 50, unit_price: 0.2, amount: 10 },
      { description: 'Montage', quantity: 2.5, unit_price: 48, amount: 120 },
    ]);
  });

  it('tables: a header on two lines ("Prix" over "unitaire") and French columns', async () => {
    const s = new Sheet();
    s.text(420, 110, 'Prix', { bold: true });
    s.text(50, 116, 'Désignation', { bold: true })
      .right(380, 116, 'Quantité', { bold: true })
      .right(540, 116, 'Montant HT', { bold: true });
    s.text(420, 122, 'unitaire', { bold: true });
    s.text(50, 145, 'Nougat 250g').right(380, 145, '20').right(460, 145, '4,55 €').right(540, 145, '91,00 €');
    s.text(50, 164, 'Huile d’olive').right(380, 164, '25').right(460, 164, '19,80 €').right(540, 164, '495,00 €');
    s.text(400, 190, 'Total HT').right(540, 190, '586,00 €');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Nougat 250g', quantity: 20, unit_price: 4.55, amount: 91 },
      { description: 'Huile d’olive', quantity: 25, unit_price: 19.8, amount: 495 },
    ]);
  });

  it('tables: a description that wraps, and an amount on the row’s second line, make one row each', async () => {
    // Rows far apart, each on three lines: the amount on the second, notes under the description.
    const rows: Array<[string, string, string, string, string]> = [
      ['Annual support plan', 'covering all sites', '1', '1,200.00', '1,200.00'],
      ['Onsite training', 'two days, travel included', '2', '650.00', '1,300.00'],
      ['Licence keys', 'for 20 seats', '20', '15.00', '300.00'],
    ];
    const t = new Sheet();
    t.text(50, 80, 'Description', { bold: true })
      .right(330, 80, 'Qty', { bold: true })
      .right(440, 80, 'Unit Price', { bold: true })
      .right(540, 80, 'Amount', { bold: true });
    for (const [i, [a, b, qty, price, amount]] of rows.entries()) {
      const y = 110 + i * 50;
      t.text(50, y, a).right(330, y, qty).right(440, y, price);
      t.text(50, y + 10, b).right(540, y + 10, amount);
    }
    t.text(380, 280, 'Subtotal').right(540, 280, '2,800.00');
    const { results } = await read([t]);
    expect(results.line_items).toEqual([
      { description: 'Annual support plan covering all sites', quantity: 1, unit_price: 1200, amount: 1200 },
      { description: 'Onsite training two days, travel included', quantity: 2, unit_price: 650, amount: 1300 },
      { description: 'Licence keys for 20 seats', quantity: 20, unit_price: 15, amount: 300 },
    ]);
    expect(results.subtotal).toBe(2800);
  });

  it('tables: a table across two pages, its header repeated and a carried-forward line at the break', async () => {
    const cols: Col[] = [
      { x: 50, header: 'Item' },
      { x: 330, header: 'Qty', right: true },
      { x: 440, header: 'Rate', right: true },
      { x: 540, header: 'Amount', right: true },
    ];
    const first = new Sheet();
    first.text(50, 40, 'Invoice Number: INV-88');
    const y = drawTable(first, 100, cols, [
      ['Design work', '10', '80.00', '800.00'],
      ['Copywriting', '5', '60.00', '300.00'],
    ]);
    first.text(50, y, 'Carried forward').right(540, y, '1,100.00');
    first.text(480, 800, 'Page 1 of 2');
    const second = new Sheet();
    second.text(50, 40, 'Invoice Number: INV-88');
    const z = drawTable(second, 100, cols, [['Hosting', '12', '25.00', '300.00']]);
    second.text(380, z + 10, 'Total').right(540, z + 10, '1,400.00');
    second.text(480, 800, 'Page 2 of 2');
    const { results, grounding } = await read([first, second]);
    expect(results.line_items).toEqual([
      { description: 'Design work', quantity: 10, unit_price: 80, amount: 800 },
      { description: 'Copywriting', quantity: 5, unit_price: 60, amount: 300 },
      { description: 'Hosting', quantity: 12, unit_price: 25, amount: 300 },
    ]);
    expect(grounding['line_items[2].amount']?.page).toBe(2);
    expect(results.total).toBe(1400);
  });

  it('tables: a totals row with a quantity column is no item, and its amount is the total', async () => {
    const s = new Sheet();
    const cols: Col[] = [
      { x: 50, header: 'Description' },
      { x: 330, header: 'Quantity', right: true },
      { x: 440, header: 'Unit Price', right: true },
      { x: 540, header: 'Amount', right: true },
    ];
    const y = drawTable(s, 100, cols, [
      ['Paper A4', '4.00', '5.00', '20.00'],
      ['Toner', '1.00', '45.00', '45.00'],
    ]);
    s.text(50, y, 'Total', { bold: true }).right(330, y, '5.00', { bold: true }).right(540, y, '65.00', { bold: true });
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Paper A4', quantity: 4, unit_price: 5, amount: 20 },
      { description: 'Toner', quantity: 1, unit_price: 45, amount: 45 },
    ]);
    expect(results.total).toBe(65);
  });

  it('tables: a sum printed under the amounts with no word is no item', async () => {
    const s = new Sheet();
    const cols: Col[] = [
      { x: 50, header: 'Description' },
      { x: 330, header: 'Qty', right: true },
      { x: 540, header: 'Amount', right: true },
    ];
    const y = drawTable(s, 100, cols, [
      ['Chair', '2', '80.00'],
      ['Lamp', '1', '25.00'],
    ]);
    s.right(330, y, '3').right(540, y, '105.00');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Chair', quantity: 2, unit_price: null, amount: 80 },
      { description: 'Lamp', quantity: 1, unit_price: null, amount: 25 },
    ]);
  });

  it('tables: values that stand under no column header make the table null, never a guessed row', async () => {
    const s = new Sheet();
    // Left-aligned titles over right-aligned numbers that stand between them: each number is nearer another title.
    s.text(50, 100, 'Description', { bold: true })
      .text(300, 100, 'Qty', { bold: true })
      .text(400, 100, 'Price', { bold: true })
      .text(480, 100, 'Amount', { bold: true });
    s.text(50, 120, 'Chair').right(395, 120, '2').right(470, 120, '40.00').right(560, 120, '80.00');
    s.text(50, 136, 'Lamp').right(395, 136, '1').right(470, 136, '25.00').right(560, 136, '25.00');
    const { results } = await read([s]);
    expect(results.line_items).toBeNull();
  });

  it('tables: a row that a later line changes (a discount under it) keeps its count, not a guessed amount', async () => {
    const s = new Sheet();
    const y = drawTable(s, 100, GERMAN, [
      ['1', 'Kunstrasen', '3', '4,00', '12,00'],
      [null, null, null, 'Rabatt', '-2,00'],
      ['2', 'Schweinesteak', '5', '5,50', '27,50'],
    ]);
    s.text(300, y + 10, 'Zwischensumme').right(540, y + 10, '37,50');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Kunstrasen', quantity: 3, unit_price: 4, amount: null },
      { description: 'Schweinesteak', quantity: 5, unit_price: 5.5, amount: 27.5 },
    ]);
  });
  it('tables: a sentence across the columns before the first row (a text-only item, or a note?) makes the table null', async () => {
    const s = new Sheet();
    drawTable(s, 100, GERMAN, []);
    s.text(50, 122, 'Gemäß Ihrer Reklamation vom 10.09.2024 erhalten Sie die folgenden Leistungen gutgeschrieben:');
    s.text(50, 150, '1')
      .text(90, 150, 'Zitronensäure 100ml')
      .right(340, 150, '-5 Stk')
      .right(440, 150, '1,00')
      .right(540, 150, '-5,00');
    s.text(50, 166, '2')
      .text(90, 166, 'Gelierzucker 250g')
      .right(340, 166, '-2 Stk')
      .right(440, 166, '1,45')
      .right(540, 166, '-2,90');
    s.text(300, 190, 'Summe netto').right(540, 190, '-7,90');
    const { results } = await read([s]);
    expect(results.line_items).toBeNull();
    // The same table without the sentence is read: the sentence alone made it null.
    const t = new Sheet();
    drawTable(t, 100, GERMAN, [
      ['1', 'Zitronensäure 100ml', '-5 Stk', '1,00', '-5,00'],
      ['2', 'Gelierzucker 250g', '-2 Stk', '1,45', '-2,90'],
    ]);
    t.text(300, 150, 'Summe netto').right(540, 150, '-7,90');
    expect((await read([t])).results.line_items).toEqual([
      { description: 'Zitronensäure 100ml', quantity: -5, unit_price: 1, amount: -5 },
      { description: 'Gelierzucker 250g', quantity: -2, unit_price: 1.45, amount: -2.9 },
    ]);
  });
  it('tables: rows whose amounts add up to no amount printed below (priced parts under a bundle) make the table null', async () => {
    const s = new Sheet();
    const y = drawTable(s, 100, GERMAN, [
      ['1', 'Werkzeugset komplett', '1', '100,00', '100,00'],
      [null, '- davon Hammer', null, null, '60,00'],
      [null, '- davon Zange', null, null, '40,00'],
    ]);
    s.text(300, y + 10, 'Summe netto').right(540, y + 10, '100,00');
    s.text(300, y + 26, 'Gesamtbetrag').right(540, y + 26, '119,00');
    const { results } = await read([s]);
    expect(results.line_items).toBeNull();
  });

  it('tables: quantity × unit price that is not the amount (a price per 100) leaves those two null, the summed amount kept', async () => {
    const s = new Sheet();
    const y = drawTable(s, 100, GERMAN, [
      ['1', 'Schrauben M4 (Preis je 100)', '500', '2,50', '12,50'],
      ['2', 'Dübel 6 mm', '50', '0,20', '10,00'],
    ]);
    s.text(300, y + 10, 'Summe netto').right(540, y + 10, '22,50');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Schrauben M4 (Preis je 100)', quantity: null, unit_price: null, amount: 12.5 },
      { description: 'Dübel 6 mm', quantity: 50, unit_price: 0.2, amount: 10 },
    ]);
  });

  it('tables: a discount printed on the row ("Rem. 10%") and a credit note’s signed amounts pass the arithmetic', async () => {
    const s = new Sheet();
    const cols: Col[] = [
      { x: 50, header: 'Désignation' },
      { x: 330, header: 'Quantité', right: true },
      { x: 410, header: 'Prix unitaire', right: true },
      { x: 460, header: 'Rem.', right: true },
      { x: 540, header: 'Prix HT', right: true },
    ];
    const y = drawTable(s, 100, cols, [
      ['Nougat 250g', '5', '4,55 €', '10%', '-20,48 €'],
      ['Huile d’olive', '10', '19,80 €', null, '-198,00 €'],
    ]);
    s.text(380, y + 10, 'Total HT').right(540, y + 10, '-218,48 €');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Nougat 250g', quantity: 5, unit_price: 4.55, amount: -20.48 },
      { description: 'Huile d’olive', quantity: 10, unit_price: 19.8, amount: -198 },
    ]);
  });
  it('tables: a net and a gross amount column leave a plain "amount" null; a column named net_amount takes the net one', async () => {
    const s = new Sheet();
    const cols: Col[] = [
      { x: 50, header: 'Bezeichnung' },
      { x: 280, header: 'Menge', right: true },
      { x: 360, header: 'Einzelpreis', right: true },
      { x: 400, header: 'USt', right: true },
      { x: 470, header: 'Nettobetrag', right: true },
      { x: 550, header: 'Bruttobetrag', right: true },
    ];
    const y = drawTable(s, 100, cols, [
      ['Schrauben', '100', '0,10', '19%', '10,00', '11,90'],
      ['Montage', '2', '50,00', '19%', '100,00', '119,00'],
    ]);
    s.text(300, y + 10, 'Summe netto').right(550, y + 10, '110,00');
    s.text(300, y + 26, 'Gesamtbetrag').right(550, y + 26, '130,90');
    const bytes = new Uint8Array(await renderPdf([s]));
    const { results } = await extractInProcess({ bytes, mimeType: 'application/pdf', fields: INVOICE_FIELDS });
    expect(results.line_items).toEqual([
      { description: 'Schrauben', quantity: 100, unit_price: 0.1, amount: null },
      { description: 'Montage', quantity: 2, unit_price: 50, amount: null },
    ]);
    const fields = FieldDefinition.parse([
      {
        name: 'items',
        type: 'table',
        columns: [
          { name: 'description', type: 'string' },
          { name: 'quantity', type: 'decimal' },
          { name: 'net_amount', type: 'decimal' },
        ],
      },
    ]);
    const net = await extractInProcess({ bytes, mimeType: 'application/pdf', fields });
    expect(net.results.items).toEqual([
      { description: 'Schrauben', quantity: 100, net_amount: 10 },
      { description: 'Montage', quantity: 2, net_amount: 100 },
    ]);
  });
  it('tables: an item’s notes set apart by a blank gap, then the next item, keep one table', async () => {
    const s = new Sheet();
    drawTable(s, 100, GERMAN, []);
    const item = (
      y: number,
      pos: string,
      name: string,
      qty: string,
      price: string,
      amount: string,
      notes: string[],
    ) => {
      s.text(50, y, pos).text(90, y, name).right(340, y, qty).right(440, y, price).right(540, y, amount);
      for (const [k, n] of notes.entries()) s.text(90, y + 34 + k * 10, n);
      return y + 34 + notes.length * 10 + 30;
    };
    let y = item(124, '1', 'Zitronensäure 100ml', '5 Stk', '1,00', '5,00', ['Verpackung: Flasche', 'VKE/Geb: 1']);
    y = item(y, '2', 'Gelierzucker Extra 250g', '2 Stk', '1,45', '2,90', ['Verpackung: Karton', 'VKE/Geb: 1']);
    s.text(300, y + 10, 'Summe netto').right(540, y + 10, '7,90');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Zitronensäure 100ml', quantity: 5, unit_price: 1, amount: 5 },
      { description: 'Gelierzucker Extra 250g', quantity: 2, unit_price: 1.45, amount: 2.9 },
    ]);
  });

  it('tables: a table of totals titled "Rate │ Net │ VAT │ Total" is no line items: the items read, its rows give subtotal, tax and total', async () => {
    const s = new Sheet();
    s.text(50, 50, 'Invoice No. INV-300').text(330, 50, 'Date: 2024-03-15');
    const items: Col[] = [
      { x: 50, header: 'Description' },
      { x: 300, header: 'Qty', right: true },
      { x: 400, header: 'Unit Price', right: true },
      { x: 540, header: 'Amount', right: true },
    ];
    const y = drawTable(s, 120, items, [
      ['Widget', '2', '50.00', '100.00'],
      ['Gadget', '1', '25.00', '25.00'],
    ]);
    // "Rate" titles a unit price and "Total" a line's amount in an items table; here they head a table of totals.
    const totals: Col[] = [
      { x: 50, header: 'Rate' },
      { x: 300, header: 'Net', right: true },
      { x: 400, header: 'VAT', right: true },
      { x: 540, header: 'Total', right: true },
    ];
    drawTable(s, y + 40, totals, [
      ['20%', '100.00', '20.00', '120.00'],
      ['10%', '25.00', '2.50', '27.50'],
      ['', '125.00', '22.50', '147.50'],
    ]);
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Widget', quantity: 2, unit_price: 50, amount: 100 },
      { description: 'Gadget', quantity: 1, unit_price: 25, amount: 25 },
    ]);
    expect(results).toMatchObject({ subtotal: 125, tax: 22.5, total: 147.5 });
  });

  it('tables: an items table whose amount column is titled "Total" is still read when a column names the items', async () => {
    const s = new Sheet();
    s.text(50, 50, 'Invoice No. INV-301');
    const cols: Col[] = [
      { x: 50, header: 'Item' },
      { x: 300, header: 'Qty', right: true },
      { x: 400, header: 'Rate', right: true },
      { x: 540, header: 'Total', right: true },
    ];
    const y = drawTable(s, 120, cols, [
      ['Consulting', '3', '80.00', '240.00'],
      ['Travel', '1', '60.00', '60.00'],
    ]);
    s.text(300, y + 10, 'Subtotal').right(540, y + 10, '300.00');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Consulting', quantity: 3, unit_price: 80, amount: 240 },
      { description: 'Travel', quantity: 1, unit_price: 60, amount: 60 },
    ]);
  });
});
