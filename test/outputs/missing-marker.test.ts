import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ResultValue, Results } from '../../src/contract/index.ts';
import { recordWithoutMarker, withoutMarker } from '../../src/outputs/missing-marker.ts';
import { storedResults, storedText } from '../../src/outputs/stored-results.ts';

/** Strings near the marker: what a real value that only looks like it may be. */
const nearMarker = fc.constantFrom('-', '--', '-5', ' - ', 'a-b', '- ', '', '−', 'null', '0');
const leaf = fc.oneof(nearMarker, fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
const results = fc.letrec<{ value: ResultValue; object: Results }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), fc.array(tie('object'), { maxLength: 3 })),
  object: fc.dictionary(fc.constantFrom('total', 'lines', '-', '__proto__', 'name', 'a.b'), tie('value'), {
    maxKeys: 5,
  }),
})).object;

/** Every leaf with its path, arrays and objects walked alike. */
function leaves(value: unknown, path = '$'): Array<[string, unknown]> {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, `${path}[${i}]`));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([k, v]) => leaves(v, `${path}.${JSON.stringify(k)}`));
  return [[path, value]];
}

describe('the missing marker', () => {
  it('missing marker: only leaves exactly equal to it become null; keys, shape and every other value stay', () => {
    fc.assert(
      fc.property(results, fc.constantFrom('-', '--', 'n/a'), fc.boolean(), (given, marker, stored) => {
        const input = stored ? storedResults(JSON.stringify(given)) : given;
        const before = JSON.stringify(given);
        const out = withoutMarker(input, marker);
        expect(JSON.stringify(given)).toBe(before); // never changed in place
        const was = leaves(JSON.parse(before));
        const now = leaves(JSON.parse(JSON.stringify(out)));
        expect(now.map(([p]) => p)).toEqual(was.map(([p]) => p));
        for (const [i, [, value]] of was.entries()) expect(now[i]![1]).toBe(value === marker ? null : value);
        // Nothing to clear: the very same results, stored text and all.
        if (!was.some(([, v]) => v === marker)) expect(out).toBe(input);
        if (stored) expect(storedText(out)).toBeDefined();
      }),
    );
  });

  it('missing marker: none (null) changes nothing; a record without results is the same record', () => {
    const given = { total: '-', lines: [{ amount: '-' }] };
    expect(withoutMarker(given, null)).toBe(given);
    const record = { file: 'a.pdf', results: null };
    expect(recordWithoutMarker(record, '-')).toBe(record);
    expect(recordWithoutMarker({ file: 'a.pdf', results: given }, '-')).toEqual({
      file: 'a.pdf',
      results: { total: null, lines: [{ amount: null }] },
    });
  });
});
