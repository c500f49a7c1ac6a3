import { describe, expect, it } from 'vitest';
import { addOutcomes, blankFieldsScore, scoreDocumentFields } from '../../fixtures/lib/fields.ts';

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
    expect(score.all).toEqual({ right: 1, wrong: 1, null: 0, sign: 2, scored: 4 });
  });

  it('engine eval: zero has no sign, and a negative truth printed negative is right', () => {
    const outcomes = scoreDocumentFields({ tax: [0], total: [-8.79] }, { tax: -0, total: -8.79 });
    expect(outcomes.map((o) => o.verdict)).toEqual(['right', 'right']);
  });
});
