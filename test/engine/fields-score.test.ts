import { describe, expect, it } from 'vitest';
import {
  addOutcomes,
  amountPrinted,
  blankFieldsScore,
  inconsistentItems,
  scoreDocumentFields,
} from '../../fixtures/lib/fields.ts';

/**
 * The scorer of every field (fixtures/lib/fields.ts) is honest: an amount printed with the
 * other sign than the XML holds (a credit note's convention) is neither right nor wrong but
 * counted apart, as an independent scorer of fields.json would not call it right.
 */
describe('fields.json scorer', () => {
  it('engine eval: a printed amount whose sign differs from the XML is "sign", not right', () => {
    const outcomes = scoreDocumentFields(
      { total: [233.47], subtotal: [218.48], tax: [14.99], 'line_items.amount': [20.48, 198] },
      { total: -233.47, subtotal: 218.48, tax: -15, line_items: [{ amount: -20.48 }, { amount: 198 }] },
    );
    expect(Object.fromEntries(outcomes.map((o) => [o.key, o.verdict]))).toEqual({
      subtotal: 'right',
      total: 'sign',
      tax: 'wrong',
      'line_items.amount': 'sign',
    });
    const score = blankFieldsScore();
    addOutcomes(score, outcomes);
    expect(score.all).toEqual({ right: 1, wrong: 1, null: 0, sign: 2, unprinted: 0, scored: 4 });
  });

  it('engine eval: zero has no sign, and a negative truth printed negative is right', () => {
    const outcomes = scoreDocumentFields({ tax: [0], total: [-8.79] }, { tax: -0, total: -8.79 });
    expect(outcomes.map((o) => o.verdict)).toEqual(['right', 'right']);
  });
});

/**
 * "unprinted": fields.json keeps a value where the XML says what the print does not (gross
 * line totals under a net column, a "fail" sample's 316.20 printed 316,00, another
 * invoice's lines). The scorer tells it apart from a wrong value by the PDF's own text, and
 * only where the truth is absent in every usual form and the engine's value is printed.
 */
describe('fields.json scorer: truth the PDF does not print', () => {
  const text = ['Summe netto', '496,00', '160,00', '316,00', '20,00', 'Bei Spiel GmbH', '400', '0,79'].join('\n');

  it('engine eval: amounts the print does not hold, where the engine gave printed ones, are "unprinted"', () => {
    const entry = { 'line_items.amount': [23.8, 160, 376.04], 'line_items.count': 3 };
    const results = { line_items: [{ amount: 160 }, { amount: 316 }, { amount: 20 }] };
    expect(scoreDocumentFields(entry, results).map((o) => o.verdict)).toEqual(['right', 'wrong']);
    const outcomes = scoreDocumentFields(entry, results, text);
    expect(outcomes.map((o) => o.verdict)).toEqual(['right', 'unprinted']);
    const score = blankFieldsScore();
    addOutcomes(score, outcomes);
    expect(score.all).toEqual({ right: 1, wrong: 0, null: 0, sign: 0, unprinted: 1, scored: 2 });
    // 316.20 is not printed ("316,00" is), 376.04 in no form.
    const fail = scoreDocumentFields({ 'line_items.amount': [20, 160, 316.2] }, results, text);
    expect(fail.map((o) => o.verdict)).toEqual(['unprinted']);
  });

  it('engine eval: a truth printed in any usual form keeps the value wrong ("376.04", "376,04 €", "1.376,04", "1,376.04", "23,8")', () => {
    const results = { line_items: [{ amount: 160 }, { amount: 316 }, { amount: 20 }] };
    for (const printed of ['376.04', '376,04 €', 'EUR 376,04', '23,8']) {
      const o = scoreDocumentFields({ 'line_items.amount': [23.8, 160, 376.04] }, results, `${text}\n${printed}`);
      expect(
        o.map((x) => x.verdict),
        printed,
      ).toEqual(['wrong']);
    }
    for (const printed of ['1.376,04', '1,376.04', '1 376,04', '1376.04']) {
      const o = scoreDocumentFields({ total: [1376.04] }, { total: 1000 }, `1.000,00\n${printed}`);
      expect(
        o.map((x) => x.verdict),
        printed,
      ).toEqual(['wrong']);
    }
  });

  it("engine eval: an engine's value the print does not hold stays wrong, though the truth is unprinted too", () => {
    const o = scoreDocumentFields({ total: [559.84] }, { total: 571.04 }, text);
    expect(o.map((x) => x.verdict)).toEqual(['wrong']);
    // A whole amount counts as printed only with its decimals or alone in its cell: "400" is, "4000" not.
    expect(amountPrinted(text, 400, true)).toBe(true);
    expect(amountPrinted('4000\n400 Stück', 400, true)).toBe(false);
    expect(amountPrinted('1.000,00', 1000, true)).toBe(true);
    expect(amountPrinted('21.000,00', 1000, true)).toBe(false);
  });

  it('engine eval: names, ids and dates: unprinted only when absent in every form', () => {
    const names = scoreDocumentFields({ 'vendor.name': ['Seller Inc'] }, { vendor: { name: 'Bei Spiel GmbH' } }, text);
    expect(names.map((x) => x.verdict)).toEqual(['unprinted']);
    const printed = scoreDocumentFields(
      { 'vendor.name': ['Seller Inc'] },
      { vendor: { name: 'Bei Spiel GmbH' } },
      `${text}\nSELLER  INC`,
    );
    expect(printed.map((x) => x.verdict)).toEqual(['wrong']);
    const dates = (t: string) =>
      scoreDocumentFields({ due_date: ['2018-04-04'] }, { due_date: '2018-03-05' }, t).map((x) => x.verdict);
    expect(dates('05.03.2018')).toEqual(['unprinted']);
    expect(dates('05.03.2018\n04.04.2018')).toEqual(['wrong']);
    expect(dates('05.03.2018\n04/04/2018')).toEqual(['wrong']);
    expect(dates('05.03.2018\nzahlbar bis 4. April 2018')).toEqual(['wrong']);
  });

  it("engine eval: a row count is unprinted only when no line amount of the truth is printed and every row's amount is", () => {
    const rows = { line_items: [{ amount: 1000 }, { amount: 300 }, { amount: 120 }] };
    const konik = ['1.000,00', '300', '120,00', 'Summe netto 1.420,00'].join('\n');
    expect(scoreDocumentFields({ 'line_items.count': 1 }, rows, konik).map((x) => x.verdict)).toEqual(['unprinted']);
    // The truth keeps a printed line amount: its count is the print's, so 3 is wrong.
    expect(
      scoreDocumentFields({ 'line_items.count': 1, 'line_items.amount': [1420] }, rows, konik).map((x) => x.verdict),
    ).toEqual(['wrong', 'wrong']);
    // A row whose amount is not printed: wrong.
    const unread = { line_items: [{ amount: 1000 }, { amount: 310 }, { amount: 120 }] };
    expect(scoreDocumentFields({ 'line_items.count': 1 }, unread, konik).map((x) => x.verdict)).toEqual(['wrong']);
  });

  it('engine eval: a line item whose quantity × unit price is not its amount is reported, against the XML when the engine gave none', () => {
    const entry = { 'line_items.amount': [32.76, 64, 1980] };
    const rows = (price: number) => ({
      line_items: [
        { quantity: 8, unit_price: price, amount: null },
        { quantity: 20, unit_price: 3.2, amount: 64 },
        { quantity: 100, unit_price: 19.8, amount: null },
      ],
    });
    // 8 × 4.55 = 36.40 less the row's 10% discount is 32.76: consistent; 8 × 455 is not.
    expect(inconsistentItems(entry, rows(4.55))).toEqual([]);
    expect(inconsistentItems(entry, rows(455))).toEqual([{ row: 0, quantity: 8, unit_price: 455, amount: 32.76 }]);
    // The engine's own amount is checked when it gave one; no amount anywhere is no check.
    expect(inconsistentItems({}, { line_items: [{ quantity: 2, unit_price: 7, amount: 15 }] })).toHaveLength(1);
    expect(inconsistentItems({}, rows(455))).toEqual([]);
  });
});
