import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LeafValue } from '../../src/contract/index.ts';
import { neutraliseFormula } from '../../src/outputs/csv.ts';
import { csvChunks } from '../../src/outputs/csv-writer.ts';
import { readCsvObjects, record } from './helpers.ts';

const FORMULA_LEADS = ['=', '+', '-', '@', '\t', '\r', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20'];

/** Strings a CSV writer finds hard: quotes, separators, newlines, and formula leads. */
const awkwardString = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: fc.constantFrom('"', ',', '\n', '\r', ' ', "'", 'a', '=', '-', '@', '+', '\t', 'é') }),
  fc.tuple(fc.constantFrom(...FORMULA_LEADS), fc.string()).map(([lead, rest]) => lead + rest),
);
const leaf: fc.Arbitrary<LeafValue> = fc.oneof(
  awkwardString,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);

function expected(value: LeafValue): string | null {
  if (value === null) return null;
  if (typeof value === 'string') return neutraliseFormula(value);
  return String(value);
}

describe('csv properties', () => {
  it('csv: any string reads back as written (neutralised if formula-leading), and null never becomes 0', () => {
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fc.constantFrom('a', 'b', 'c'), leaf), { minLength: 1, maxLength: 5 }),
        (results) => {
          const records = results.map((r, i) => record({ document_id: `doc_${i}`, results: r }));
          const rows = readCsvObjects([...csvChunks(records)].join(''));
          expect(rows).toHaveLength(records.length);
          for (const [i, r] of results.entries()) {
            for (const key of ['a', 'b', 'c']) {
              const value = r[key];
              const cell = rows[i]?.[key];
              // A key no document has is no column at all; a null one is an empty cell.
              if (value === undefined) expect(cell ?? null).toBeNull();
              else if (value === null) expect(cell).toBeNull();
              else expect(cell).toBe(expected(value));
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('csv: a string that is not formula-leading round-trips exactly', () => {
    fc.assert(
      fc.property(
        awkwardString.filter((s) => !FORMULA_LEADS.includes(s[0] ?? '')),
        (text) => {
          const [row] = readCsvObjects([...csvChunks([record({ results: { v: text } })])].join(''));
          expect(row?.v).toBe(text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('csv: a number reads back as the same number, negative ones not neutralised', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const [row] = readCsvObjects([...csvChunks([record({ results: { v: n } })])].join(''));
        expect(Number(row?.v)).toBe(n === 0 ? 0 : n);
      }),
    );
  });
});
