import { describe, expect, it } from 'vitest';
import { Sheet } from '../../fixtures/lib/pdf.ts';
import { readSheet } from './read-sheet.ts';

/**
 * Labels by meaning, not by string: pages drawn here in the shapes that other producers
 * print (not their files), with labels one step from the dev set's wording. Each either
 * reads the value or, where the page's own arithmetic refutes it, gives null: never a guess.
 */

const read = readSheet;

describe('engine: labels by meaning', () => {
  it('engine: "Rechnungswährung: EUR" and "DEVISE : EURO (EUR)" name the currency', async () => {
    const a = new Sheet();
    a.text(50, 50, 'Rechnung Nr. 4711').text(50, 80, 'Rechnungswährung: EUR');
    a.text(300, 200, 'Gesamtbetrag').right(540, 200, '119,00');
    expect((await read(a)).currency).toBe('EUR');
    const b = new Sheet();
    b.text(50, 50, 'FACTURE N° : F-2022-31').text(300, 80, 'DEVISE : EURO (EUR)');
    b.text(300, 200, 'Total TTC').right(540, 200, '110,00');
    expect((await read(b)).currency).toBe('EUR');
  });

  it('engine: "Steuerbetrag in EUR" and "Steuerbetrag in │ EUR │ 56,87" label the tax; "TOTAL │ RM │ 14.10" the total', async () => {
    const a = new Sheet();
    a.text(220, 300, 'Rechnungssumme ohne USt.').right(540, 300, '473,00');
    a.text(220, 326, 'Steuerbetrag in EUR').right(540, 326, '56,87');
    a.text(220, 352, 'Bruttosumme').right(540, 352, '529,87');
    expect(await read(a)).toMatchObject({ subtotal: 473, tax: 56.87, total: 529.87 });
    const b = new Sheet();
    b.text(220, 300, 'Steuerbetrag in').text(400, 300, 'EUR').right(540, 300, '56,87');
    expect((await read(b)).tax).toBe(56.87);
    const c = new Sheet();
    c.text(50, 300, 'TOTAL').text(300, 300, 'RM').right(540, 300, '14.10');
    expect((await read(c)).total).toBe(14.1);
  });

  it('engine: labels composed of a head and a qualifier: "Total amount (net):", "Total tax amount:", "Currency:: EUR"', async () => {
    const s = new Sheet();
    s.text(300, 300, 'Total amount (net):').right(540, 300, '20.549,00 €');
    s.text(300, 315, 'Total tax amount:').right(540, 315, '3.904,31 €');
    s.text(300, 330, 'Total amount (gross):').right(540, 330, '24.453,31 €');
    s.text(50, 400, 'Currency:: EUR');
    expect(await read(s)).toMatchObject({ subtotal: 20549, tax: 3904.31, total: 24453.31, currency: 'EUR' });
    const de = new Sheet();
    de.text(300, 300, 'Gesamtbetrag Netto:').right(540, 300, '554,55');
    de.text(300, 315, 'Gesamtbetrag Steuer:').right(540, 315, '100,83');
    de.text(300, 330, 'Gesamtbetrag Brutto:').right(540, 330, '655,38');
    expect(await read(de)).toMatchObject({ subtotal: 554.55, tax: 100.83, total: 655.38 });
    const en = new Sheet();
    en.text(300, 300, 'Subtotal').right(540, 300, '573.00');
    en.text(300, 330, 'Total € Incl. VAT').right(540, 330, '681.87');
    expect((await read(en)).total).toBe(681.87);
  });

  it('engine: an order reference with a number word before or after it: "N° BON DE COMMANDE : PO…", "Bestellung Nr. Kunde: │ B…"', async () => {
    const a = new Sheet();
    a.text(50, 50, 'FACTURE N° : F-2022-31');
    a.lines(50, 200, 10, [
      'N° DE CLIENT : REFCLI0215',
      'N° CONTRAT : CT2018120802',
      'N° BON DE COMMANDE : PO201925478',
    ]);
    expect((await read(a)).purchase_order).toBe('PO201925478');
    const b = new Sheet();
    b.text(50, 200, 'Bestellung Nr. Kunde:').text(300, 200, 'B123456789');
    expect((await read(b)).purchase_order).toBe('B123456789');
  });

  it('engine: a "Key │ : value" list is read as a list: "Bestell-Nr │ : B123" over "Bestell-Datum │ : 01.08.2019"', async () => {
    const s = new Sheet();
    s.size = 8;
    s.text(175, 400, 'Bestell-Nr').text(223, 400, ': B123456789');
    s.text(175, 409, 'Bestell-Datum').text(232, 409, ': 01.08.2019');
    s.text(175, 427, 'Lieferschein-Nr').text(232, 427, ': L87654321012345');
    s.text(175, 436, 'Lieferschein-Datum : 05.08.2019');
    expect((await read(s)).purchase_order).toBe('B123456789');
  });

  it('engine: a row of labels over its amounts, beside another column whose lines fall between', async () => {
    const s = new Sheet();
    s.size = 7;
    s.text(50, 600, 'Tout retard de paiement engendre une pénalité exigible');
    s.text(355, 604, 'TOTAL HT').text(410, 604, 'TOTAL TVA').text(470, 604, 'TOTAL TTC');
    s.text(50, 609, 'de trois fois le taux d’intérêt légal.');
    s.text(50, 618, 'Indemnité forfaitaire pour frais de recouvrement : 40 €.');
    s.text(50, 626, 'Les réglements reçus avant la date d’échéance.');
    s.text(359, 626, '100,80').text(416, 626, '7,02').text(476, 626, '107,82');
    expect(await read(s)).toMatchObject({ subtotal: 100.8, tax: 7.02, total: 107.82 });
  });
});

describe('engine: sums checked by arithmetic', () => {
  it('engine: a Dutch "Subtotaal" equal to the total is gross; "Exclusief BTW" is the net', async () => {
    const a = new Sheet();
    a.text(300, 300, 'Subtotaal').right(540, 300, '121,00');
    a.text(300, 315, 'Exclusief BTW').right(540, 315, '100,00');
    a.text(300, 330, 'BTW').right(540, 330, '21,00');
    a.text(300, 345, 'Totaal').right(540, 345, '121,00');
    expect(await read(a)).toMatchObject({ subtotal: 100, tax: 21, total: 121 });
    const b = new Sheet();
    b.text(300, 300, 'Subtotaal').right(540, 300, '121,00');
    b.text(300, 330, 'BTW').right(540, 330, '21,00');
    b.text(300, 345, 'Totaal').right(540, 345, '121,00');
    expect(await read(b)).toMatchObject({ subtotal: null, tax: 21, total: 121 });
  });

  it('engine: two net sums ("Positionssumme", "Rechnungssumme ohne USt."): the one the tax and the total add up with', async () => {
    const s = new Sheet();
    s.text(220, 300, 'Positionssumme').right(540, 300, '-7,90');
    s.text(220, 326, 'Gesamtbetrag der Abschläge').right(540, 326, '0,23');
    s.text(220, 352, 'Rechnungssumme ohne USt.').right(540, 352, '-7,67');
    s.text(220, 378, 'Steuerbetrag').right(540, 378, '-1,12');
    s.text(220, 404, 'Bruttosumme').right(540, 404, '-8,79');
    expect(await read(s)).toMatchObject({ subtotal: -7.67, tax: -1.12, total: -8.79 });
  });

  it('engine: rows of a tax breakdown with more columns (Warenwert, Zu-/Abschlag) do not veto the labelled tax', async () => {
    const s = new Sheet();
    s.size = 8;
    const row = (y: number, cells: string[]) => {
      s.text(50, y, cells[0] ?? '');
      for (const [k, c] of cells.slice(1).entries()) s.right(260 + k * 70, y, c);
    };
    row(100, ['Art (Kategorie)', 'Warenwert', 'Zu-/Abschlag', 'Basisbetrag', 'Steuersatz', 'Steuerbetrag']);
    row(120, ['Umsatzsteuer (S)', '-5,00', '0,15', '-4,85', '19', '-0,92']);
    row(140, ['Umsatzsteuer (S)', '-2,90', '0,08', '-2,82', '7', '-0,20']);
    s.text(220, 300, 'Rechnungssumme ohne USt.').right(540, 300, '-7,67');
    s.text(220, 326, 'Steuerbetrag in EUR').right(540, 326, '-1,12');
    s.text(220, 352, 'Bruttosumme').right(540, 352, '-8,79');
    expect(await read(s)).toMatchObject({ subtotal: -7.67, tax: -1.12, total: -8.79 });
  });

  it('engine: parts that disagree with the total are null, not a guess', async () => {
    const s = new Sheet();
    s.text(300, 300, 'Subtotal').right(540, 300, '100.00');
    s.text(300, 315, 'Tax').right(540, 315, '19.00');
    s.text(300, 330, 'Total').right(540, 330, '150.00');
    expect(await read(s)).toMatchObject({ subtotal: null, tax: null, total: 150 });
  });

  it('engine: a column of payment terms: the due date is the one a discount does not set', async () => {
    const s = new Sheet();
    s.text(50, 300, 'Zahlungsbedingungen', { bold: true });
    s.text(50, 320, 'Beschreibung').text(330, 320, 'Fälligkeit').text(420, 320, 'Teilzahlung');
    s.text(50, 334, 'Zahlbar ohne Abschlag bis').text(330, 334, '20.11.2018');
    s.text(50, 346, 'Zahlbar mit 2% Skonto bis').text(330, 346, '14.11.2018');
    expect((await read(s)).due_date).toBe('2018-11-20');
  });

  it('engine: opening hours are no money: "Mo.-Fr. 08.30 - 12.30 Uhr" names no Swiss franc', async () => {
    const s = new Sheet();
    s.text(50, 50, 'Rechnung Nr. 4711');
    s.text(50, 80, 'Telefon: Mo.-Fr. 08.30 - 12.30 Uhr');
    s.text(300, 200, 'Gesamtbetrag').right(540, 200, '119,00');
    expect((await read(s)).currency).toBeNull();
  });
});
