import { describe, expect, it } from 'vitest';
import { Sheet } from '../../fixtures/lib/pdf.ts';
import { readSheet } from './read-sheet.ts';

/**
 * Recall on the fields real invoices print but the engine left null: order references,
 * due dates, tax, the parties' names. Each layout is drawn here in general shapes (never a
 * copy of a corpus file), and each has its twin that must stay null: precision first.
 */

const read = readSheet;

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

describe('recall: tax', () => {
  it('engine: the tax total of a table of rates ("Total taxes", "USt. Gesamt:", "Summe Umsatzsteuer")', async () => {
    const fr = new Sheet();
    fr.text(111, 57, 'TVA : FR11999999998 - SIRET : 99999999800010 - SARL au capital de 120 000,00 €', { size: 8 });
    fr.text(89, 429, 'Taxe').text(188, 429, 'Base').text(254, 429, 'Montant');
    fr.text(454, 429, 'Total HT').right(562, 429, '624,90 €');
    fr.text(34, 441, 'TVA collectée (vente) 20,0%', { size: 7 }).right(229, 441, '81,90 €', { size: 7 });
    fr.right(301, 441, '16,38 €', { size: 7 });
    fr.text(442, 448, 'Total taxes').right(562, 448, '46,25 €');
    fr.text(34, 455, 'TVA collectée (vente) 5,5%', { size: 7 }).right(229, 455, '543,00 €', { size: 7 });
    fr.right(301, 455, '29,87 €', { size: 7 });
    fr.text(448, 465, 'Total TTC').right(562, 465, '671,15 €');
    expect(await read(fr)).toMatchObject({ tax: 46.25, total: 671.15 });

    const de = new Sheet();
    de.text(57, 506, 'Nettobetrag: 496,00 €');
    de.text(60, 546, 'USt. Satz', { size: 9 }).text(141, 546, 'Nettopreis', { size: 9 });
    de.text(211, 546, 'Ust.-Betrag', { size: 9 });
    de.text(60, 562, '7%', { size: 9 }).text(141, 562, '160,00 €', { size: 9 }).text(211, 562, '11,20 €', { size: 9 });
    de.text(60, 577, '19%', { size: 9 }).text(141, 577, '336,00 €', { size: 9 }).text(211, 577, '63,84 €', { size: 9 });
    de.text(133, 595, 'USt. Gesamt: 75,04 €');
    de.text(57, 612, 'Gesamtbetrag: 571,04 €');
    expect(await read(de)).toMatchObject({ tax: 75.04, total: 571.04 });

    const sum = new Sheet();
    sum.text(57, 597, 'Rechnungssumme Netto (exkl. USt.)').right(545, 597, '193,83');
    sum.text(180, 611, 'zzgl. Umsatzsteuer').text(337, 611, '7%').text(385, 611, 'von');
    sum.right(484, 611, '129,37').right(545, 611, '9,06');
    sum.text(180, 624, 'zzgl. Umsatzsteuer').text(332, 624, '19%').text(385, 624, 'von');
    sum.right(484, 624, '64,46').right(545, 624, '12,25');
    sum.text(180, 638, 'Summe Umsatzsteuer').right(545, 638, '21,31');
    expect((await read(sum)).tax).toBe(21.31);
  });

  it('engine: a rate row "Umsatzsteuer (S) │ base │ rate │ tax" gives its tax when base × rate / 100 is the tax; below the invoice\'s tax label', async () => {
    const table = (s: Sheet, rows: Array<[string, string, string]>) => {
      s.text(50, 50, 'Rechnung Nr. 471102').text(330, 50, 'Datum: 05.06.2018');
      s.text(50, 200, 'Umsatzsteueraufschlüsselung');
      s.text(50, 220, 'Art (Kategorie)').text(200, 220, 'Warenwert').text(340, 220, 'Basisbetrag');
      s.text(420, 220, 'Steuersatz [%]').text(500, 220, 'Steuerbetrag');
      for (const [i, [base, rate, tax]] of rows.entries())
        s.text(50, 245 + 25 * i, 'Umsatzsteuer (S)')
          .right(400, 245 + 25 * i, base)
          .right(470, 245 + 25 * i, rate)
          .right(540, 245 + 25 * i, tax);
      return s;
    };
    const one = table(new Sheet(), [['113,03', '7', '7,91']]);
    one.text(200, 400, 'Rechnungssumme ohne USt.').right(540, 400, '113,03');
    one.text(200, 440, 'Bruttosumme').right(540, 440, '120,94');
    expect(await read(one)).toMatchObject({ subtotal: 113.03, tax: 7.91, total: 120.94 });

    // Two rates: each row's tax is a part; the invoice's own tax label gives the whole.
    const two = table(new Sheet(), [
      ['113,03', '7', '7,91'],
      ['64,46', '19', '12,25'],
    ]);
    two.text(200, 400, 'Rechnungssumme ohne USt.').right(540, 400, '177,49');
    two.text(200, 420, 'Steuerbetrag').right(540, 420, '20,16');
    two.text(200, 440, 'Bruttosumme').right(540, 440, '197,65');
    expect(await read(two)).toMatchObject({ subtotal: 177.49, tax: 20.16, total: 197.65 });

    // Two rates and no tax label: the parts disagree, so null.
    const parts = table(new Sheet(), [
      ['113,03', '7', '7,91'],
      ['64,46', '19', '12,25'],
    ]);
    expect((await read(parts)).tax).toBeNull();

    // The checksum fails (113,03 × 19 % is not 7,91): which number is the tax is a guess.
    const off = table(new Sheet(), [['113,03', '19', '7,91']]);
    expect((await read(off)).tax).toBeNull();
  });

  it('engine: "MwSt. 19% │ 198,00 │ 37,62": the rate in the label, the base and the tax its checksum vouches for', async () => {
    const rated = (label: string, base: string, tax: string) => {
      const s = new Sheet();
      s.text(50, 50, 'Rechnung Nr. 471102');
      s.text(60, 367, 'Rechnungssumme Netto').right(540, 367, '198,00');
      s.text(60, 381, label).right(480, 381, base).right(540, 381, tax);
      s.text(60, 400, 'Rechnungssumme Brutto').right(540, 400, '235,62');
      return s;
    };
    expect(await read(rated('MwSt. 19%', '198,00', '37,62'))).toMatchObject({
      subtotal: 198,
      tax: 37.62,
      total: 235.62,
    });
    expect((await read(rated('USt 19 %', '198,00', '37,62'))).tax).toBe(37.62);
    // 20 % of 198,00 is not 37,62: which number is the tax is a guess.
    expect((await read(rated('MwSt. 20%', '198,00', '37,62'))).tax).toBeNull();
  });

  it('engine: a tax label before a VAT id that fails its check digits still makes the tax null', async () => {
    const s = new Sheet();
    s.text(111, 57, 'TVA : FR11999999999 - SIRET : 99999999800010', { size: 8 });
    s.text(442, 448, 'Total taxes').right(562, 448, '46,25 €');
    expect((await read(s)).tax).toBeNull();
  });
});

describe('recall: due dates', () => {
  const withTerms = async (...sentences: string[]) => {
    const s = new Sheet();
    s.text(57, 60, 'Rechnung Nr. 4711');
    for (const [i, t] of sentences.entries()) s.text(57, 600 + 20 * i, t);
    return (await read(s)).due_date;
  };

  it('engine: the deadline of a sentence about paying ("bis zum", "until", "avant le", "due on")', async () => {
    expect(await withTerms('Bitte überweisen Sie bis zum 30.05.2017.')).toBe('2017-05-30');
    expect(await withTerms('Please remit until 2019-07-01.')).toBe('2019-07-01');
    expect(await withTerms('Facture à régler avant le 13/12/2017 par virement.')).toBe('2017-12-13');
    expect(await withTerms('Payment due on March 5, 2024.')).toBe('2024-03-05');
    expect(
      await withTerms('Zahlbar innerhalb 30 Tagen netto bis 04.04.2013, 3% Skonto innerhalb 10 Tagen bis 15.03.2013'),
    ).toBe('2013-04-04');
  });

  it('engine: no due date from a discount, a payment made, a period, a term in days, or two deadlines', async () => {
    expect(await withTerms('3% Skonto bei Zahlung bis 15.03.2013')).toBeNull();
    expect(await withTerms('Zahlung erhalten am 05.03.2018, vielen Dank.')).toBeNull();
    expect(await withTerms('Paid by card on 2024-03-01.')).toBeNull();
    expect(await withTerms('Leistungszeitraum vom 06.12.2013 bis zum 06.12.2014')).toBeNull();
    expect(await withTerms('Zahlbar innerhalb von 14 Tagen ohne Abzug.')).toBeNull();
    expect(await withTerms('Bitte zahlen Sie bis zum 30.05.2017.', 'Payable by 2017-06-30.')).toBeNull();
  });

  it('engine: a labelled due date outranks the terms sentence', async () => {
    const s = new Sheet();
    s.text(57, 100, 'Due Date:').text(200, 100, '2024-04-01');
    s.text(57, 600, 'Please pay by 2024-05-01.');
    expect((await read(s)).due_date).toBe('2024-04-01');
  });

  it('engine: a due-date column of one row gives its date; of two rows, none', async () => {
    const one = new Sheet();
    one.text(70, 634, 'Beschreibung').text(402, 634, 'Fälligkeit').text(474, 634, 'Teilzahlung');
    one.text(70, 648, 'Zahlbar ohne Abzug', { size: 8 }).text(402, 648, '04.04.2018', { size: 8 });
    expect((await read(one)).due_date).toBe('2018-04-04');
    const two = new Sheet();
    two.text(70, 634, 'Beschreibung').text(402, 634, 'Fälligkeit').text(474, 634, 'Teilzahlung');
    two.text(70, 648, 'Erste Rate', { size: 8 }).text(402, 648, '04.04.2018', { size: 8 });
    two.text(474, 648, '100,00', { size: 8 });
    two.text(70, 660, 'Zweite Rate', { size: 8 }).text(402, 660, '04.05.2018', { size: 8 });
    two.text(474, 660, '100,00', { size: 8 });
    expect((await read(two)).due_date).toBeNull();
  });
});

describe('recall: parties from the address window', () => {
  /** A letter's window: the return line in small print, the recipient's address below it. */
  function window(s: Sheet, returnLine: string[], recipient: string[]): Sheet {
    // Standard fonts have no "●": the bullet "•" is drawn as its own piece, as generators do.
    let x = 102;
    for (const [i, part] of returnLine.entries()) {
      if (i > 0) {
        s.text(x + 6, 161, '•', { size: 7 });
        x += 16;
      }
      s.text(x, 161, part, { size: 7 });
      x += part.length * 3.6;
    }
    s.lines(71, 182, 14, recipient, { size: 11 });
    return s;
  }

  it('engine: the return line names the seller and the block below it the buyer', async () => {
    const de = window(
      new Sheet(),
      ['Bei Spiel GmbH', 'Ecke 12', '12345 Stadthausen'],
      ['Theodor Est', 'Bahnstr. 42', '88802 Spielkreis'],
    );
    de.text(57, 363, 'Rechnung # RE-20170509/505 von 09.05.2017');
    expect(await read(de)).toMatchObject({ vendor: { name: 'Bei Spiel GmbH' }, bill_to: { name: 'Theodor Est' } });
    const en = new Sheet();
    en.text(71, 150, 'Acme Tools Ltd · 12 High Street · London EC1A 1BB', { size: 7 });
    en.lines(71, 170, 14, ['Globex Corporation', '500 Main Street', 'Springfield, IL 62701']);
    expect(await read(en)).toMatchObject({
      vendor: { name: 'Acme Tools Ltd' },
      bill_to: { name: 'Globex Corporation' },
    });
  });

  it('engine: no window, a salutation, or two return lines: the names stay null', async () => {
    const letterhead = new Sheet();
    letterhead.text(111, 39, "Au bon moulin SARL - 1242 chemin de l'olive - 84340 Malaucène - France", { size: 8 });
    letterhead.text(111, 48, '+33 4 50 44 68 99 - http://www.aubonmoulin.fr', { size: 8 });
    letterhead.text(111, 57, 'SIRET : 99999999800010 - APE : 4778C', { size: 8 });
    expect(await read(letterhead)).toMatchObject({ vendor: { name: null }, bill_to: { name: null } });
    const herrn = window(
      new Sheet(),
      ['Bei Spiel GmbH', 'Ecke 12', '12345 Stadthausen'],
      ['Herrn', 'Max Mustermann', 'Bahnstr. 42', '88802 Spielkreis'],
    );
    expect((await read(herrn)).bill_to).toMatchObject({ name: null });
    const two = window(
      new Sheet(),
      ['A GmbH', 'Weg 1', '12345 Ort'],
      ['Theodor Est', 'Bahnstr. 42', '88802 Spielkreis'],
    );
    two.text(102, 461, 'B GmbH • Weg 2 • 54321 Dorf', { size: 7 });
    two.lines(71, 482, 14, ['Erika Muster', 'Hauptstr. 1', '10115 Berlin']);
    expect(await read(two)).toMatchObject({ vendor: { name: null }, bill_to: { name: null } });
  });

  it('engine: a block headed "Rechnungsersteller" is the seller\'s', async () => {
    const s = new Sheet();
    s.text(40, 47, 'Rechnungsersteller', { size: 7 });
    s.lines(53, 64, 14, ['Lieferant GmbH', 'Lieferantenstraße 20', '80333 München']);
    expect((await read(s)).vendor).toMatchObject({ name: 'Lieferant GmbH' });
  });
});

describe('recall: the seller from its imprint and letterhead', () => {
  const imprint = (s: Sheet, name: string) => {
    s.text(50, 50, 'Rechnung Nr. 4711');
    s.text(44, 780, name, { size: 7 }).text(157, 780, 'Geschäftsführung: M. Muster', { size: 7 });
    s.text(270, 780, 'USt-IdNr: DE123456789', { size: 7 }).text(384, 780, 'HRB Nr. 372876', { size: 7 });
    return s;
  };

  it("engine: the legal name on the line that prints the seller's VAT id is the seller's name", async () => {
    expect((await read(imprint(new Sheet(), 'MUSTERLIEFERANT GMBH'))).vendor).toMatchObject({
      name: 'MUSTERLIEFERANT GMBH',
      vat_id: 'DE123456789',
    });
    // A block that names the seller the same way agrees with it.
    const same = imprint(new Sheet(), 'MUSTERLIEFERANT GMBH');
    same
      .text(40, 120, 'Lieferant')
      .lines(40, 135, 12, ['MUSTERLIEFERANT GMBH', 'Bahnhofstraße 99', '99199 Musterhausen']);
    expect((await read(same)).vendor).toMatchObject({ name: 'MUSTERLIEFERANT GMBH' });
  });

  it('engine: a block and an imprint that name two sellers, or an imprint with no legal form: null', async () => {
    const two = imprint(new Sheet(), 'MUSTERLIEFERANT GMBH');
    two
      .text(40, 120, 'Lieferant')
      .lines(40, 135, 12, ['KOSTENLIEFERANT GMBH', 'Bahnhofstraße 99', '99199 Musterhausen']);
    expect((await read(two)).vendor).toMatchObject({ name: null, vat_id: 'DE123456789' });
    expect((await read(imprint(new Sheet(), 'Deutschland'))).vendor).toMatchObject({ name: null });
  });

  it("engine: a company's name heading page 1 above the addressee's block is the seller (wrapped or not)", async () => {
    const letter = (head: string[]) => {
      const s = new Sheet();
      s.lines(71, 114, 12, head);
      s.lines(71, 160, 12, ['Herrn', 'Max Mustermann', 'Musterstr. 11', '12346 Bad Musterhausen']);
      s.text(71, 333, 'Beitragsrechnung Nr. 00.123.456.7');
      return s;
    };
    expect((await read(letter(['Muster Versicherung AG']))).vendor).toMatchObject({ name: 'Muster Versicherung AG' });
    expect((await read(letter(['MVM Musterhafter', 'Versicherungsverein Musterstadt a.G.']))).vendor).toMatchObject({
      name: 'MVM Musterhafter Versicherungsverein Musterstadt a.G.',
    });
    // No legal form: any first line (a slogan, a department) could head the page.
    expect((await read(letter(['Versicherungsbüro Muster']))).vendor).toMatchObject({ name: null });
  });

  it("engine: the first block of a page that is the addressee's own (its postcode in it) is no letterhead", async () => {
    const s = new Sheet();
    s.lines(71, 114, 12, ['Globex GmbH', 'Hauptstr. 1', '10115 Berlin']);
    s.lines(71, 190, 12, ['Kundennummer 4711', 'Hauptstr. 1', '10115 Berlin']);
    s.text(71, 333, 'Rechnung Nr. 2024-1');
    expect((await read(s)).vendor).toMatchObject({ name: null });
  });
});
