import { describe, expect, it } from 'vitest';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { extractInProcess } from '../../src/engine/extract.ts';
import { Sheet, renderPdf } from '../../fixtures/lib/pdf.ts';

/**
 * A line item's unit price is returned only when the layout vouches for it: its
 * quantity × unit price must make the amount printed on its row, even when that amount's
 * column names no field of the definition, and a money cell printed with no decimal mark
 * among cells that print cents ("455€" for "4.55 €", as OCR reads it) is no value.
 */

async function read(s: Sheet) {
  const bytes = await renderPdf([s]);
  const out = await extractInProcess({
    bytes: new Uint8Array(bytes),
    mimeType: 'application/pdf',
    fields: INVOICE_FIELDS,
  });
  return out.results.line_items;
}

/** Facture_UE's layout: the amount column is "Price w/o Tax", which no field of the built-in parser names. */
function sheet(rows: ReadonlyArray<readonly [string, string, string, string, string]>): Sheet {
  const s = new Sheet();
  s.text(50, 50, 'Invoice FA-2017-0008');
  s.text(160, 120, 'Description', { bold: true })
    .right(390, 120, 'Quantity', { bold: true })
    .right(456, 120, 'Unit Price', { bold: true })
    .right(493, 120, 'Disc.', { bold: true })
    .right(562, 120, 'Price w/o Tax', { bold: true });
  let y = 142;
  for (const [d, q, p, disc, amount] of rows) {
    s.text(40, y, d).right(390, y, q).right(456, y, p);
    if (disc !== '') s.right(493, y, disc);
    s.right(562, y, amount);
    y += 18;
  }
  s.text(454, y + 10, 'Net total').right(562, y + 10, '2,076.76 €');
  return s;
}

describe('engine: line-item prices the row’s amount vouches for', () => {
  it('prices: quantity × unit price must make the row’s amount in a column that names no field', async () => {
    const items = await read(
      sheet([
        ['Nougat de l’Abbaye 250g', '8 Unit(s)', '4.65 €', '10%', '32.76 €'],
        ['Biscuits aux raisins 300g', '20 Unit(s)', '3.20 €', '', '64.00 €'],
        ['Huile d’olive à l’ancienne', '100 Liter(s)', '19.80 €', '', '1,980.00 €'],
      ]),
    );
    expect(items).toEqual([
      { description: 'Nougat de l’Abbaye 250g', quantity: null, unit_price: null, amount: null },
      { description: 'Biscuits aux raisins 300g', quantity: 20, unit_price: 3.2, amount: null },
      { description: 'Huile d’olive à l’ancienne', quantity: 100, unit_price: 19.8, amount: null },
    ]);
  });

  it('prices: rows that add up keep their quantity and unit price (the discount on the row counts)', async () => {
    const items = await read(
      sheet([
        ['Nougat de l’Abbaye 250g', '8 Unit(s)', '4.55 €', '10%', '32.76 €'],
        ['Biscuits aux raisins 300g', '20 Unit(s)', '3.20 €', '', '64.00 €'],
        ['Huile d’olive à l’ancienne', '100 Liter(s)', '19.80 €', '', '1,980.00 €'],
      ]),
    );
    expect(items).toEqual([
      { description: 'Nougat de l’Abbaye 250g', quantity: 8, unit_price: 4.55, amount: null },
      { description: 'Biscuits aux raisins 300g', quantity: 20, unit_price: 3.2, amount: null },
      { description: 'Huile d’olive à l’ancienne', quantity: 100, unit_price: 19.8, amount: null },
    ]);
  });

  it('prices: a price printed with no decimal mark among prices with cents ("455€") is null', async () => {
    const items = await read(
      sheet([
        ['Nougat de l’Abbaye 250g', '8 Unit(s)', '455€', '10%', '32.76 €'],
        ['Biscuits aux raisins 300g', '20 Unit(s)', '3.20€', '', '64.00 €'],
        ['Huile d’olive à l’ancienne', '100 Liter(s)', '19.80 €', '', '1,980.00 €'],
      ]),
    );
    expect(items).toMatchObject([
      { description: 'Nougat de l’Abbaye 250g', quantity: 8, unit_price: null, amount: null },
      { quantity: 20, unit_price: 3.2 },
      { quantity: 100, unit_price: 19.8 },
    ]);
  });

  it('prices: a column of amounts no row’s product makes (a tax, a gross) vouches for nothing and takes nothing', async () => {
    // "Price w/o Tax" here holds a figure no row's quantity × price makes: not the rows' amounts.
    const items = await read(
      sheet([
        ['Biscuits aux raisins 300g', '20 Unit(s)', '3.20 €', '', '12.16 €'],
        ['Huile d’olive à l’ancienne', '100 Liter(s)', '19.80 €', '', '376.20 €'],
      ]),
    );
    expect(items).toEqual([
      { description: 'Biscuits aux raisins 300g', quantity: 20, unit_price: 3.2, amount: null },
      { description: 'Huile d’olive à l’ancienne', quantity: 100, unit_price: 19.8, amount: null },
    ]);
  });

  it('prices: a row printed without cents whose quantity × price makes its amount keeps them ("30 Meter │ 10 │ 300")', async () => {
    const s = new Sheet();
    s.text(50, 120, 'Description', { bold: true })
      .right(330, 120, 'Qty', { bold: true })
      .right(440, 120, 'Unit Price', { bold: true })
      .right(540, 120, 'Amount', { bold: true });
    s.text(50, 142, 'Amboss 250 kg').right(330, 142, '1').right(440, 142, '1.000,00').right(540, 142, '1.000,00');
    s.text(50, 160, 'Kette').right(330, 160, '30 Meter').right(440, 160, '10').right(540, 160, '300');
    s.text(50, 178, 'Seil').right(330, 178, '2 Meter').right(440, 178, '7').right(540, 178, '15');
    s.text(380, 200, 'Summe netto').right(540, 200, '1.315,00');
    const items = await read(s);
    expect(items).toEqual([
      { description: 'Amboss 250 kg', quantity: 1, unit_price: 1000, amount: 1000 },
      { description: 'Kette', quantity: 30, unit_price: 10, amount: 300 },
      // 2 × 7 is not 15, and neither prints cents as the column does: no value is vouched for.
      { description: 'Seil', quantity: 2, unit_price: null, amount: null },
    ]);
  });
});
