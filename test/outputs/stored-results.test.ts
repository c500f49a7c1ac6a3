import { afterEach, describe, expect, it, vi } from 'vitest';
import { flattenRecords } from '../../src/outputs/flatten.ts';
import { documentJson, jsonLine } from '../../src/outputs/json.ts';
import { completedRecord, recordFields } from '../../src/outputs/record.ts';
import { resultsJson, storedHoldsNull, storedResults, storedText } from '../../src/outputs/stored-results.ts';
import { reviewEntry } from '../../src/outputs/review.ts';

const results = {
  invoice_number: 'INV-1',
  total: 0,
  paid: null,
  vendor: { name: 'Acme "quoted"\tand tabbed', address: null },
  line_items: [{ description: 'ünïcode', amount: 1.5 }],
};
const origin = { file: 'a.pdf', document_id: 'doc_1', route: 'inline' as const };

afterEach(() => {
  vi.restoreAllMocks();
});

describe('stored results', () => {
  it('read as the results they were stored from: keys, values, nulls and zeros kept', () => {
    const stored = storedResults(JSON.stringify(results));
    expect(stored).toEqual(results);
    expect(Object.entries(stored)).toEqual(Object.entries(results));
    expect(JSON.stringify(stored)).toBe(JSON.stringify(results));
    expect(stored.paid).toBeNull();
    expect(stored.total).toBe(0);
    expect('vendor' in stored).toBe(true);
  });

  it('are read-only', () => {
    const stored = storedResults(JSON.stringify(results));
    expect(() => {
      (stored as Record<string, unknown>).total = 5;
    }).toThrow(TypeError);
    expect(stored.total).toBe(0);
  });

  it('a JSON Lines line copies the stored text, never parsing it, and is byte-for-byte the plain one', () => {
    const text = JSON.stringify(results);
    const stored = storedResults(text);
    const parse = vi.spyOn(JSON, 'parse');
    const line = jsonLine(completedRecord(origin, 1, stored));
    expect(parse).not.toHaveBeenCalled();
    expect(line).toBe(jsonLine(completedRecord(origin, 1, results)));
    expect(resultsJson(stored)).toBe(text);
    expect(storedText(stored)).toBe(text);
  });

  it('outputs that look inside (CSV columns, pretty JSON) read them as plain results', () => {
    const stored = storedResults(JSON.stringify(results));
    expect(documentJson(completedRecord(origin, 1, stored))).toBe(documentJson(completedRecord(origin, 1, results)));
    expect(flattenRecords([completedRecord(origin, 1, stored)])).toEqual(
      flattenRecords([completedRecord(origin, 1, results)]),
    );
  });

  it('plain results have no stored text', () => {
    expect(storedText(results)).toBeUndefined();
    expect(storedText(null)).toBeUndefined();
    expect(resultsJson(results)).toBe(JSON.stringify(results));
  });

  it('a record written and then listed for review scans its stored text for a null once, and parses nothing', () => {
    const stored = storedResults(JSON.stringify(results));
    const scan = vi.fn((text: string) => text.includes('null'));
    expect(storedHoldsNull(stored, scan)).toBe(true);
    expect(storedHoldsNull(stored, scan)).toBe(true);
    expect(scan).toHaveBeenCalledTimes(1);
    expect(storedHoldsNull(results, scan)).toBeUndefined();
    const parse = vi.spyOn(JSON, 'parse');
    const record = completedRecord(origin, 1, storedResults(JSON.stringify(results)));
    expect(recordFields(record).needs_review).toBe(true);
    expect(reviewEntry(record)?.file_name).toBe('a.pdf');
    expect(parse).not.toHaveBeenCalled();
  });
});
