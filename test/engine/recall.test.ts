import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/contract/index.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { extractInProcess } from '../../src/engine/index.ts';
import { Sheet, renderPdf } from '../../fixtures/lib/pdf.ts';

/**
 * Recall on the fields real invoices print but the engine left null: order references,
 * due dates, tax, the parties' names. Each layout is drawn here in general shapes (never a
 * copy of a corpus file), and each has its twin that must stay null: precision first.
 */

async function read(sheet: Sheet, fields: FieldDefinition = INVOICE_FIELDS) {
  const bytes = await renderPdf([sheet]);
  return (await extractInProcess({ bytes: new Uint8Array(bytes), mimeType: 'application/pdf', fields })).results;
}

/** A column of keys with their values beside them, as invoices print their references. */
function keyColumn(s: Sheet, y: number, rows: Array<[string, string]>): Sheet {
  for (const [i, [key, value]] of rows.entries()) s.text(34, y + 17 * i, key).text(155, y + 17 * i, value);
  return s;
}

describe('recall: order references', () => {
  it('engine: a value beside its label in a column of keys is read, though the next key stands below the label', async () => {
    const fr = keyColumn(new Sheet(), 230, [
      ['Date de facture', '13/11/2017'],
      ["Date d'échéance", '13/12/2017'],
      ['Votre référence', 'PO445'],
      ['Réf. marché', 'MSPE2017'],
      ['N° TVA client', 'FR19787878784'],
    ]);
    expect(await read(fr)).toMatchObject({ purchase_order: 'PO445', due_date: '2017-12-13' });
    const en = keyColumn(new Sheet(), 230, [
      ['Invoice date', '11/13/2017'],
      ['Your Reference', 'COMPRA0832'],
      ['Contract', 'MSPE2017'],
      ['Customer VAT No', 'ES12345678Z'],
    ]);
    expect((await read(en)).purchase_order).toBe('COMPRA0832');
  });

  it('engine: two unlabelled key/value pairs stacked stay ambiguous (no label of the vocabulary in the column)', async () => {
    const s = keyColumn(new Sheet(), 230, [
      ['Votre référence', 'PO445'],
      ['Réf. marché', 'MSPE2017'],
    ]);
    expect((await read(s)).purchase_order).toBeNull();
  });

  it('engine: "Bestellung:" is the order, and an order number stops at its comma ("…, Lieferschein-Nr. L876")', async () => {
    const a = new Sheet();
    a.text(70, 100, 'Währung:').text(261, 100, 'EUR');
    a.text(70, 118, 'Bestellung:').text(261, 118, '2018-471331');
    expect((await read(a)).purchase_order).toBe('2018-471331');
    const b = new Sheet();
    b.text(112, 476, 'Bestell-Nr: B610061523500010, Lieferschein-Nr. L87654321011');
    b.text(112, 529, 'Bestell-Nr: B610061523500010,');
    expect((await read(b)).purchase_order).toBe('B610061523500010');
    const c = new Sheet();
    c.text(112, 476, 'Order No: PO-1, PO-2');
    expect((await read(c)).purchase_order).not.toBe('PO-1');
  });
});
