import { describe, expect, it } from 'vitest';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { extractInProcess } from '../../src/engine/extract.ts';
import { type Col, Sheet, drawTable, renderPdf } from '../../fixtures/lib/pdf.ts';

/**
 * Line items on layouts the engine was not tuned on, each drawn on a synthetic page of the
 * shape real producers print: a header with titles the vocabulary does not know or two titles
 * in one cell, article numbers and price notes under an item, a table that runs over a page
 * break with no header repeated, and the items' printed sum that vouches for the rows or makes
 * the table null (never a wrong count).
 */

async function read(pages: Sheet[]) {
  const bytes = await renderPdf(pages);
  return extractInProcess({ bytes: new Uint8Array(bytes), mimeType: 'application/pdf', fields: INVOICE_FIELDS });
}

/** Small print, as renderers of e-invoices draw their item lists. */
const SMALL = { size: 7 };
type Item = { pos: string; refs: string[]; name: string; price: string; qty: string; rate: string; amount: string };

/**
 * "Pos │ Referenzen │ Beschreibung │ Nettopreis │ Menge Einheit │ Steuersatz │ Nettobetrag" and a
 * rule's padding under it; `plain`: one title a cell, the first row close under it (a header
 * the engine read before, so that what the rows and sums do is what is tested).
 */
function header(s: Sheet, y: number, plain = false): number {
  s.text(66, y, 'Pos', SMALL).text(126, y, plain ? 'Art-Nr.' : 'Referenzen', SMALL);
  s.text(186, y, plain ? 'Bezeichnung' : 'Beschreibung', SMALL);
  s.right(302, y, plain ? 'Einzelpreis' : 'Nettopreis', SMALL).right(381, y, plain ? 'Menge' : 'Menge Einheit', SMALL);
  s.right(481, y, plain ? 'USt.' : 'Steuersatz', SMALL).right(533, y, plain ? 'Gesamt' : 'Nettobetrag', SMALL);
  return y + (plain ? 12 : 19);
}

/** An item's line, its article numbers on sub-lines under "Referenzen" and its gross price noted under it. */
function item(s: Sheet, y: number, it: Item): number {
  s.text(66, y, it.pos, SMALL).text(186, y, it.name, SMALL).right(302, y, it.price, SMALL);
  s.right(372, y, it.qty, SMALL).right(481, y, it.rate, SMALL).right(538, y, it.amount, SMALL);
  for (const [k, ref] of it.refs.entries()) s.text(126, y + 7 * (k + 1), ref, SMALL);
  const below = y + 7 * it.refs.length + 11;
  s.text(186, below, `Bruttopreis :${it.price}`, SMALL);
  return below + 22;
}

const TRENN: Item = {
  pos: '1',
  refs: ['Art-Nr-Lieferant:', 'TB100A4', '4012345001235 (GTIN)'],
  name: 'Trennblätter A4',
  price: '9,9000',
  qty: '20 Stk',
  rate: '19%',
  amount: '198,00',
};
const JOGHURT: Item = {
  pos: '2',
  refs: ['Art-Nr-Lieferant: ARNR2', '4000050986428 (GTIN)'],
  name: 'Joghurt Banane',
  price: '5,5000',
  qty: '50 Stk',
  rate: '7%',
  amount: '275,00',
};

function belegsummen(s: Sheet, y: number, rows: Array<[string, string]>): void {
  s.text(63, y, 'Belegsummen', { size: 9 });
  for (const [k, [label, amount]] of rows.entries())
    s.text(226, y + 20 + 26 * k, label, SMALL).right(533, y + 20 + 26 * k, amount, SMALL);
}

describe('engine: line items on other producers’ layouts', () => {
  it('tables: a header cell of two titles ("Menge Einheit") and columns no field asks for ("Referenzen", "Steuersatz") are read; article numbers are no items', async () => {
    const s = new Sheet();
    s.text(63, 60, 'Handelsrechnung Nr. 471102 vom 05.03.2018', { size: 10 });
    s.text(63, 100, 'Positionsdaten', { size: 9 });
    let y = header(s, 120);
    y = item(s, y, TRENN);
    y = item(s, y, JOGHURT);
    belegsummen(s, y + 30, [
      ['Positionssumme', '473,00'],
      ['Steuerbetrag', '56,87'],
      ['Bruttosumme', '529,87'],
    ]);
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Trennblätter A4', quantity: 20, unit_price: 9.9, amount: 198 },
      { description: 'Joghurt Banane', quantity: 50, unit_price: 5.5, amount: 275 },
    ]);
  });

  it('tables: rows go on after a page break with no header repeated, when they line up under the columns', async () => {
    // Page 1's rows add up to a figure page 2 prints (the 19% tax base): only the items' sum tells the table.
    const first = new Sheet();
    first.text(57, 40, 'Visualisierung eRechnung', { size: 6 });
    first.text(63, 100, 'Positionsdaten', { size: 9 });
    let y = header(first, 120, true);
    y = item(first, y, TRENN);
    y = item(first, y, { ...TRENN, pos: '2', name: 'Ordner A4', amount: '198,00' });
    first.right(539, 820, 'Seite 1 von 2', { size: 6 });
    const second = new Sheet();
    second.text(57, 40, 'Visualisierung eRechnung', { size: 6 });
    let z = item(second, 70, { ...JOGHURT, pos: '3' });
    z = item(second, z, { ...JOGHURT, pos: '4', name: 'Joghurt Erdbeere' });
    second.text(63, z + 20, 'Umsatzsteueraufschlüsselung', { size: 9 });
    second.text(66, z + 40, 'Art (Kategorie)', SMALL).right(382, z + 40, 'Basisbetrag', SMALL);
    second.right(461, z + 40, 'Steuersatz', SMALL).right(533, z + 40, 'Steuerbetrag', SMALL);
    second.text(66, z + 60, 'Umsatzsteuer (S)', SMALL).right(382, z + 60, '550,00', SMALL);
    second.right(461, z + 60, '7', SMALL).right(533, z + 60, '38,50', SMALL);
    second.text(66, z + 75, 'Umsatzsteuer (S)', SMALL).right(382, z + 75, '396,00', SMALL);
    second.right(461, z + 75, '19', SMALL).right(533, z + 75, '75,24', SMALL);
    belegsummen(second, z + 110, [
      ['Positionssumme', '946,00'],
      ['Steuerbetrag', '113,74'],
      ['Bruttosumme', '1.059,74'],
    ]);
    second.right(539, 820, 'Seite 2 von 2', { size: 6 });
    const { results, grounding } = await read([first, second]);
    expect(results.line_items).toEqual([
      { description: 'Trennblätter A4', quantity: 20, unit_price: 9.9, amount: 198 },
      { description: 'Ordner A4', quantity: 20, unit_price: 9.9, amount: 198 },
      { description: 'Joghurt Banane', quantity: 50, unit_price: 5.5, amount: 275 },
      { description: 'Joghurt Erdbeere', quantity: 50, unit_price: 5.5, amount: 275 },
    ]);
    expect(grounding['line_items[3].amount']?.page).toBe(2);
  });

  it('tables: rows whose sum a figure below happens to print, while the items’ printed sum disagrees, make the table null', async () => {
    // Two items read; the third stands where no column lines up (a page of another layout): the
    // tax base prints the two rows' sum, "Positionssumme" the three items'.
    const s = new Sheet();
    s.text(63, 100, 'Positionsdaten', { size: 9 });
    let y = header(s, 120, true);
    y = item(s, y, TRENN);
    y = item(s, y, JOGHURT);
    s.text(63, y, 'Weitere Positionen siehe Anlage', { size: 9 });
    s.text(66, y + 30, 'Umsatzsteuer (S)', SMALL)
      .right(382, y + 30, '473,00', SMALL)
      .right(533, y + 30, '56,87', SMALL);
    belegsummen(s, y + 60, [
      ['Positionssumme', '573,00'],
      ['Bruttosumme', '648,87'],
    ]);
    const { results } = await read([s]);
    expect(results.line_items).toBeNull();
  });

  it('tables: a group’s subtotal billed as a line ("Subtotal hardware │ 1 Stk │ 1.050,00") is an item, and a table that then does not add up is null', async () => {
    const s = new Sheet();
    s.text(63, 100, 'Positionsdaten', { size: 9 });
    let y = header(s, 120, true);
    y = item(s, y, { ...TRENN, pos: '0101', name: 'Laser printer', price: '300,00', qty: '2 Stk', amount: '600,00' });
    y = item(s, y, { ...TRENN, pos: '0102', name: 'Ink printer', price: '150,00', qty: '3 Stk', amount: '450,00' });
    y = item(s, y, {
      ...TRENN,
      pos: '01',
      name: 'Subtotal hardware',
      price: '1.050,00',
      qty: '1 Stk',
      amount: '1.050,00',
    });
    y = item(s, y, { ...TRENN, pos: '0201', name: 'Toner', price: '120,00', qty: '3 Stk', amount: '360,00' });
    y = item(s, y, {
      ...TRENN,
      pos: '02',
      name: 'Subtotal accessories',
      price: '360,00',
      qty: '1 Stk',
      amount: '360,00',
    });
    belegsummen(s, y + 20, [
      ['Positionssumme', '1.410,00'],
      ['Bruttosumme', '1.677,90'],
    ]);
    const { results } = await read([s]);
    expect(results.line_items).toBeNull();
  });

  it('tables: a price note under an item ("Abschlag │ -100,00" under the price) is no item', async () => {
    const s = new Sheet();
    s.text(63, 100, 'Positionsdaten', { size: 9 });
    const y = header(s, 120, true);
    s.text(66, y, '1', SMALL).text(186, y, 'Stahlcoil', SMALL).right(302, y, '85,00', SMALL);
    s.right(372, y, '10 Stk', SMALL).right(481, y, '19%', SMALL).right(538, y, '850,00', SMALL);
    s.text(186, y + 25, 'Abschlag;', SMALL);
    s.text(186, y + 33, 'Lagerware', SMALL).right(302, y + 33, '-100,00', SMALL);
    s.text(186, y + 41, '10% von 1.000', SMALL);
    s.text(186, y + 55, 'Abschlag;', SMALL);
    s.text(186, y + 63, 'Direktbelieferung', SMALL).right(302, y + 63, '-50,00', SMALL);
    belegsummen(s, y + 100, [
      ['Positionssumme', '850,00'],
      ['Bruttosumme', '1.011,50'],
    ]);
    const { results } = await read([s]);
    expect(results.line_items).toEqual([{ description: 'Stahlcoil', quantity: 10, unit_price: 85, amount: 850 }]);
  });

  it('tables: a header whose columns are mostly ones no field asks for (article numbers, unit, tax rate) is read; "Pos-Betrag" over "ohne USt." is the amount', async () => {
    const s = new Sheet();
    s.text(50, 60, 'Rechnung Nr. 2024-88', { size: 10 });
    s.text(50, 120, 'Pos', SMALL).text(80, 120, 'Art-Nr.', SMALL).text(125, 120, 'EAN', SMALL);
    s.text(190, 120, 'Bezeichnung', SMALL).right(360, 120, 'Menge', SMALL).text(370, 120, 'ME', SMALL);
    s.right(430, 120, 'Preis', SMALL).right(470, 120, 'USt.', SMALL).right(540, 120, 'Pos-Betrag', SMALL);
    s.right(540, 128, 'ohne USt.', SMALL);
    const rows = [
      ['1', 'ZS997', '4123456000014', 'Zitronensäure 100ml', '100', 'Stk', '1,00', '19 %', '100,00'],
      ['2', 'GZ250', '4123456000021', 'Gelierzucker 250g', '50', 'Stk', '1,45', '7 %', '72,50'],
    ];
    for (const [k, r] of rows.entries()) {
      const y = 145 + 16 * k;
      s.text(50, y, r[0] ?? '', SMALL)
        .text(80, y, r[1] ?? '', SMALL)
        .text(125, y, r[2] ?? '', SMALL);
      s.text(190, y, r[3] ?? '', SMALL)
        .right(360, y, r[4] ?? '', SMALL)
        .text(370, y, r[5] ?? '', SMALL);
      s.right(430, y, r[6] ?? '', SMALL)
        .right(470, y, r[7] ?? '', SMALL)
        .right(540, y, r[8] ?? '', SMALL);
    }
    s.text(300, 200, 'Summe Positionen', SMALL).right(540, 200, '172,50', SMALL);
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Zitronensäure 100ml', quantity: 100, unit_price: 1, amount: 100 },
      { description: 'Gelierzucker 250g', quantity: 50, unit_price: 1.45, amount: 72.5 },
    ]);
  });
});

describe('engine: rows that may or may not be the items', () => {
  const COLS: Col[] = [
    { x: 60, header: 'Description' },
    { x: 330, header: 'Qty', right: true },
    { x: 420, header: 'Unit Price', right: true },
    { x: 520, header: 'Amount', right: true },
  ];

  it('tables: a group’s subtotal on a line of its own ("Subtotal hardware │ 1,050.00"), then the next group’s items: null, not the first group alone', async () => {
    const s = new Sheet();
    s.text(60, 40, 'INVOICE 2024-18', { size: 16 });
    let y = drawTable(s, 120, COLS, [
      ['Laser printer', '2', '300.00', '600.00'],
      ['Ink printer', '3', '150.00', '450.00'],
    ]);
    s.text(60, y, 'Subtotal hardware').right(520, y, '1,050.00');
    y += 20;
    s.text(60, y, 'Toner').right(330, y, '3').right(420, y, '120.00').right(520, y, '360.00');
    y += 16;
    s.text(60, y, 'Subtotal accessories').right(520, y, '360.00');
    s.text(300, y + 30, 'Net total').right(520, y + 30, '1,410.00');
    s.text(300, y + 46, 'Total').right(520, y + 46, '1,692.00');
    const { results } = await read([s]);
    expect(results.line_items).toBeNull();
  });

  it('tables: a discount billed as a row ("Discount 10%" with an amount alone, negative) makes the count a guess: null', async () => {
    const s = new Sheet();
    s.text(60, 40, 'INVOICE 2024-19', { size: 16 });
    const y = drawTable(s, 120, COLS, [
      ['Widget', '10', '10.00', '100.00'],
      ['Gadget', '2', '100.00', '200.00'],
      ['Discount 10%', null, null, '-30.00'],
    ]);
    s.text(300, y + 20, 'Subtotal').right(520, y + 20, '270.00');
    s.text(300, y + 36, 'Total').right(520, y + 36, '324.00');
    const { results } = await read([s]);
    expect(results.line_items).toBeNull();
    // A row with its amount alone that is no deduction ("Shipping │ │ │ 20.00") is an item.
    const t = new Sheet();
    const z = drawTable(t, 120, COLS, [
      ['Widget', '10', '10.00', '100.00'],
      ['Shipping', null, null, '20.00'],
    ]);
    t.text(300, z + 20, 'Subtotal').right(520, z + 20, '120.00');
    expect((await read([t])).results.line_items).toEqual([
      { description: 'Widget', quantity: 10, unit_price: 10, amount: 100 },
      { description: 'Shipping', quantity: null, unit_price: null, amount: 20 },
    ]);
  });

  it('tables: "Tax Amount" over the lines’ tax is no amount column, even when the tax total is their sum', async () => {
    const s = new Sheet();
    s.text(60, 40, 'INVOICE 7', { size: 16 });
    const cols: Col[] = [...COLS.slice(0, 3), { x: 520, header: 'Tax Amount', right: true }];
    const y = drawTable(s, 120, cols, [
      ['Widget', '10', '10.00', '20.00'],
      ['Gadget', '2', '100.00', '40.00'],
    ]);
    s.text(300, y + 20, 'Total VAT').right(520, y + 20, '60.00');
    const { results } = await read([s]);
    expect(results.line_items).toEqual([
      { description: 'Widget', quantity: 10, unit_price: 10, amount: null },
      { description: 'Gadget', quantity: 2, unit_price: 100, amount: null },
    ]);
  });
});
