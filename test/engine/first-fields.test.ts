import { describe, expect, it } from 'vitest';
import { FieldDefinition as FieldDefinitionSchema } from '../../src/contract/index.ts';
import { Sheet } from '../../fixtures/lib/pdf.ts';
import { readSheet } from './read-sheet.ts';

/**
 * The three first fields (number, date, total) on the layouts that still left them null:
 * a heading that names the issuer between "Rechnung" and "Nr.", a date on the line under
 * the number, and a user's aliases of equal rank that the vocabulary ranks. Drawn in
 * general shapes, never a copy of a corpus file; each has its twin that must stay null.
 */

const read = readSheet;

function heading(text: string, next?: string): Sheet {
  const s = new Sheet();
  s.text(65, 64, text, { size: 12 });
  if (next !== undefined) s.text(65, 80, next, { size: 12 });
  s.text(70, 120, 'Währung:').text(261, 120, 'EUR');
  s.text(70, 138, 'Liefer- und Leistungsdatum:').text(261, 138, '30.06.2018');
  return s;
}

describe('the invoice number and date of a heading', () => {
  it('engine: words between the title and "Nr." that name no other document ("Rechnung des Versicherers (575) Nr.", "Schlussrechnung Bau Nr.")', async () => {
    expect(await read(heading('Rechnung des Versicherers (575) Nr. 00.123.456.7-2018-1 vom 11.03.2018'))).toMatchObject(
      {
        invoice_number: '00.123.456.7-2018-1',
        invoice_date: '2018-03-11',
      },
    );
    expect(await read(heading('Schlussrechnung Bau (877) Nr. 181301674 vom 25.04.2018'))).toMatchObject({
      invoice_number: '181301674',
      invoice_date: '2018-04-25',
    });
  });

  it('engine: words that name another document keep its number out ("Rechnung zur Bestellung Nr.", "Rechnung der Bestellung Nr.")', async () => {
    for (const text of [
      'Rechnung zur Bestellung Nr. 4711 vom 01.03.2018',
      'Rechnung der Bestellung Nr. 4711 vom 01.03.2018',
      'Invoice for Order No. 4711 dated 2018-03-01',
      'Rechnung zu Lieferschein Nr. 4711 vom 01.03.2018',
    ]) {
      const r = await read(heading(text));
      expect(r.invoice_number, text).toBeNull();
      expect(r.invoice_date, text).toBeNull();
    }
  });

  it('engine: the date on the line under the number ("Rechnung Nr. 471102" / "vom 05.03.2018")', async () => {
    expect(await read(heading('Rechnung Nr. 471102', 'vom 05.03.2018'))).toMatchObject({
      invoice_number: '471102',
      invoice_date: '2018-03-05',
    });
    expect(await read(heading('Invoice No. INV-2044', 'dated 2024-02-01'))).toMatchObject({
      invoice_number: 'INV-2044',
      invoice_date: '2024-02-01',
    });
  });

  it('engine: no date from a line under another number, nor from a clause that goes on ("vom … bis …")', async () => {
    expect((await read(heading('Lieferschein Nr. 471102', 'vom 05.03.2018'))).invoice_date).toBeNull();
    expect((await read(heading('Rechnung Nr. 471102', 'vom 05.03.2018 bis 31.03.2018'))).invoice_date).toBeNull();
  });
});

describe("a user's aliases of equal rank", () => {
  const fields = FieldDefinitionSchema.parse([
    { name: 'amount', type: 'decimal', label: 'Total', aliases: ['Gesamtbetrag', 'Zahlbetrag', 'Summe'] },
  ]);
  const totals = (rows: Array<[string, string]>) => {
    const s = new Sheet();
    s.text(57, 60, 'Rechnung Nr. 4711');
    for (const [i, [label, amount]] of rows.entries())
      s.text(350, 500 + 16 * i, label).right(540, 500 + 16 * i, amount);
    return s;
  };

  it('engine: a gross total and the amount due after a printed deposit: the vocabulary ranks the gross total first', async () => {
    const s = totals([
      ['Gesamtbetrag', '671,15'],
      ['Anzahlung', '201,00'],
      ['Zahlbetrag', '470,15'],
    ]);
    expect((await read(s, fields)).amount).toBe(671.15);
  });

  it('engine: the same two amounts with no deposit printed stay null', async () => {
    const s = totals([
      ['Gesamtbetrag', '671,15'],
      ['Zahlbetrag', '470,15'],
    ]);
    expect((await read(s, fields)).amount).toBeNull();
  });

  it('engine: two labels the vocabulary ranks alike that disagree stay null', async () => {
    const s = totals([
      ['Gesamtbetrag', '671,15'],
      ['Summe', '470,15'],
    ]);
    expect((await read(s, fields)).amount).toBeNull();
  });
});

describe('a summary table of totals', () => {
  /** Column titles at the x of each, then rows of amounts right-aligned under them. */
  const summary = (titles: Array<[number, string]>, rows: string[][], gapBeforeLast = 8) => {
    const s = new Sheet();
    s.text(57, 60, 'Rechnung Nr. 4711');
    for (const [x, t] of titles) s.text(x, 600, t, { size: 8 });
    for (const [i, row] of rows.entries()) {
      const y = 612 + 10 * i + (i === rows.length - 1 ? gapBeforeLast : 0);
      for (const [k, amount] of row.entries()) s.right((titles[k]?.[0] ?? 0) + 55, y, amount, { size: 8 });
    }
    return s;
  };
  const de: Array<[number, string]> = [
    [50, 'Warenwert'],
    [150, 'Nettobetrag'],
    [250, 'MwSt-Betrag'],
    [350, 'MwSt-%'],
    [450, 'Endbetrag'],
  ];

  it('engine: "Nettobetrag │ MwSt-Betrag │ Endbetrag" over a row per rate and their sum: the sum row is subtotal, tax and total', async () => {
    const s = summary(de, [
      ['326,50', '321,40', '61,07', '19,0', '382,47'],
      ['130,70', '127,59', '8,93', '7,0', '136,52'],
      ['457,20', '448,99', '70,00', 'EUR', '518,99'],
    ]);
    expect(await read(s)).toMatchObject({ subtotal: 448.99, tax: 70, total: 518.99 });
    const en = summary(
      [
        [50, 'Net Amount'],
        [150, 'VAT Amount'],
        [250, 'Total Amount'],
      ],
      [
        ['100.00', '20.00', '120.00'],
        ['100.00', '20.00', '120.00'],
      ],
    );
    expect(await read(en)).toMatchObject({ subtotal: 100, tax: 20, total: 120 });
  });

  it('engine: no sum row, a row whose net and tax do not make its gross, or a sum that does not add up: null', async () => {
    const noSum = summary(de, [
      ['326,50', '321,40', '61,07', '19,0', '382,47'],
      ['130,70', '127,59', '8,93', '7,0', '136,52'],
    ]);
    expect(await read(noSum)).toMatchObject({ subtotal: null, tax: null, total: null });
    const lone = summary(de, [['457,20', '448,99', '70,00', 'EUR', '518,99']]);
    expect(await read(lone)).toMatchObject({ subtotal: null, tax: null, total: null });
    const badRow = summary(de, [
      ['326,50', '321,40', '61,07', '19,0', '382,47'],
      ['130,70', '127,59', '8,93', '7,0', '136,50'],
      ['457,20', '448,99', '70,00', 'EUR', '518,97'],
    ]);
    expect(await read(badRow)).toMatchObject({ subtotal: null, tax: null, total: null });
    const badSum = summary(de, [
      ['326,50', '321,40', '61,07', '19,0', '382,47'],
      ['130,70', '127,59', '8,93', '7,0', '136,52'],
      ['457,20', '448,00', '70,00', 'EUR', '518,00'],
    ]);
    expect(await read(badSum)).toMatchObject({ subtotal: null, tax: null, total: null });
  });

  it('engine: a sum row a few blank lines under the rates is still the sum row; one far below is not', async () => {
    const rows = [
      ['1062,60', '1056,05', '200,65', '19,0', '1256,70'],
      ['1062,60', '1056,05', '200,65', 'EUR', '1256,70'],
    ];
    expect(await read(summary(de, rows, 20))).toMatchObject({ subtotal: 1056.05, tax: 200.65, total: 1256.7 });
    expect(await read(summary(de, rows, 80))).toMatchObject({ subtotal: null, tax: null, total: null });
  });

  it('engine: a labelled total elsewhere outranks the summary table', async () => {
    const s = summary(de, [
      ['100,00', '100,00', '19,00', '19,0', '119,00'],
      ['100,00', '100,00', '19,00', 'EUR', '119,00'],
    ]);
    s.text(350, 700, 'Zahlbetrag:').right(540, 700, '119,00');
    s.text(350, 715, 'Gesamtbetrag:').right(540, 715, '119,00');
    expect((await read(s)).total).toBe(119);
  });
});

describe('a total no label names', () => {
  const sheet = (...lines: string[]) => {
    const s = new Sheet();
    s.text(57, 60, 'Invoice No. 2044');
    for (const [i, t] of lines.entries()) s.text(57, 500 + 16 * i, t);
    return s;
  };

  it('engine: the one printed amount that is the subtotal plus the tax ("Subtotal: 200.00", "Sales Tax: 16.50", "Kindly transfer: 216.50")', async () => {
    const r = await read(sheet('Subtotal: 200.00', 'Sales Tax: 16.50', 'Kindly transfer: 216.50 USD'));
    expect(r).toMatchObject({ subtotal: 200, tax: 16.5, total: 216.5 });
  });

  it('engine: no printed sum, or a total label whose values disagree, stays null', async () => {
    expect((await read(sheet('Subtotal: 200.00', 'Sales Tax: 16.50', 'Kindly transfer: 226.50'))).total).toBeNull();
    const disagree = await read(
      sheet('Subtotal: 200.00', 'Sales Tax: 16.50', 'Total: 216.50', 'Total: 240.00', 'Kindly transfer: 216.50'),
    );
    expect(disagree.total).toBeNull();
  });
});

describe("a party's block that opens with its registered number", () => {
  const block = (heading: string, lines: string[]) => {
    const s = new Sheet();
    s.text(350, 60, 'Invoice No. 2044');
    s.text(40, 150, heading);
    s.lines(53, 166, 12, lines);
    return s;
  };

  it('engine: "Bill To" / "DUNS 150483782" / "Acme Corp": the name is the line after the number', async () => {
    const r = await read(block('Bill To', ['DUNS 150483782', 'Acme Corp', '12 Main Street', 'Springfield, IL 62701']));
    expect((r.bill_to as { name: unknown }).name).toBe('Acme Corp');
    const de = await read(
      block('Rechnungsempfänger', ['GLN 4000001987658', 'Kunden AG Mitte', 'Kundenstraße 15', '69876 Frankfurt']),
    );
    expect((de.bill_to as { name: unknown }).name).toBe('Kunden AG Mitte');
  });

  it('engine: "Lieferant" / "GLN 4333741000005 Lief-Nr: 549910" / "MUSTER GMBH": numbers under their keys after the registered one', async () => {
    const r = await read(
      block('Lieferant', [
        'GLN 4333741000005 Lief-Nr: 549910',
        'MUSTER GMBH',
        'Bahnhofstraße 99',
        '99199 Musterhausen',
      ]),
    );
    expect((r.vendor as { name: unknown }).name).toBe('MUSTER GMBH');
    // Another key line before the name is passed over too; a street after the keys is no name.
    const key = await read(block('Lieferant', ['GLN 4333741000005 Lief-Nr: 549910', 'Kunden-Nr: 4711', 'MUSTER GMBH']));
    expect((key.vendor as { name: unknown }).name).toBe('MUSTER GMBH');
    const street = await read(
      block('Lieferant', ['GLN 4333741000005', 'Kunden-Nr: 4711', 'Bahnhofstraße 99', '99199 Musterhausen']),
    );
    expect((street.vendor as { name: unknown }).name).toBeNull();
  });

  it('engine: a short customer number, or a salutation after the number, names no one', async () => {
    const short = await read(block('Bill To', ['Cust 12345', 'Acme Corp', '12 Main Street']));
    expect((short.bill_to as { name: unknown }).name).toBeNull();
    const salutation = await read(block('Bill To', ['DUNS 150483782', 'Mr.', 'John Smith']));
    expect((salutation.bill_to as { name: unknown }).name).toBeNull();
  });
});
