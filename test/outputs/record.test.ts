import { describe, expect, it } from 'vitest';
import { DocumentRecord } from '../../src/outputs/record-schema.ts';
import {
  completedRecord,
  errorRecord,
  notSubmittedRecord,
  pendingRecord,
  RECORD_KEYS,
  recordFields,
} from '../../src/outputs/record.ts';
import { flattenRecords } from '../../src/outputs/flatten.ts';

const origin = { file: 'a.pdf', document_id: 'doc_1', route: 'inline' } as const;

describe('record constructors', () => {
  it('give each status the nulls it implies, and records the schema accepts', () => {
    const records = [
      completedRecord(origin, 3, { total: null, name: 'x' }),
      errorRecord(origin, 'unreadable'),
      pendingRecord(origin, 'still processing', 2),
      notSubmittedRecord({ file: 'a.pdf', route: 'upload' }, 'not submitted: stopped'),
    ];
    for (const r of records) expect(DocumentRecord.parse(r)).toEqual(r);
    expect(records.map((r) => [r.status, r.document_id, r.page_count, r.error])).toEqual([
      ['completed', 'doc_1', 3, null],
      ['error', 'doc_1', null, 'unreadable'],
      ['pending', 'doc_1', 2, 'still processing'],
      ['not_submitted', null, null, 'not submitted: stopped'],
    ]);
    // A null in the results stays null (never zero, never dropped).
    expect(records[0]!.results).toEqual({ total: null, name: 'x' });
    expect(records.slice(1).map((r) => r.results)).toEqual([null, null, null]);
  });

  it('recordFields keeps only the record, whatever the entry carries beside it', () => {
    const entry = { ...errorRecord(origin, 'no'), outcome: 'failed', sha256: 'ab' };
    expect(Object.keys(recordFields(entry)).sort()).toEqual(
      ['document_id', 'error', 'file', 'needs_review', 'page_count', 'results', 'route', 'status'].sort(),
    );
  });
});

describe('needs_review', () => {
  it('a completed record needs review when any value is null, stored results included (read as text, a "null" inside a string is no null)', async () => {
    const { needsReview } = await import('../../src/outputs/review.ts');
    const { storedResults } = await import('../../src/outputs/stored-results.ts');
    const cases: Array<[Record<string, unknown>, boolean]> = [
      [{ total: 1, note: 'null', q: 'say \\"null\\"' }, false],
      [{ total: null }, true],
      [{ lines: [{ a: 1 }, { a: null }] }, true],
      [{ customer: { email: null } }, true],
      [{ 'key "null"': 'x\\\\', n: 0 }, false],
      [{ a: 'x\\\\', b: null }, true],
    ];
    for (const [results, expected] of cases) {
      const plain = completedRecord(origin, 1, results as never);
      const stored = completedRecord(origin, 1, storedResults(JSON.stringify(results)));
      expect([needsReview(plain), needsReview(stored)], JSON.stringify(results)).toEqual([expected, expected]);
    }
    expect(needsReview(completedRecord(origin, 1, null))).toBe(true);
    expect(needsReview(errorRecord(origin, 'no'))).toBeNull();
  });
});

describe('record keys', () => {
  it("record keys: one list orders every output: JSON's keys are the schema's, CSV's document columns the same less route and results", () => {
    const record = completedRecord(origin, 1, { status: 'paid', total: 3 });
    expect(RECORD_KEYS).toEqual(expect.arrayContaining(Object.keys(DocumentRecord.shape)));
    expect(RECORD_KEYS).toHaveLength(Object.keys(DocumentRecord.shape).length);
    expect(Object.keys(recordFields({ ...record, extra: 1 } as typeof record))).toEqual(RECORD_KEYS);
    const { columns, rows } = flattenRecords([record]);
    expect(columns).toEqual([
      ...RECORD_KEYS.filter((k) => k !== 'route' && k !== 'results'),
      'results.status',
      'total',
    ]);
    expect(Object.fromEntries(rows[0]!)).toMatchObject({
      file: 'a.pdf',
      status: 'completed',
      needs_review: false,
      'results.status': 'paid',
    });
  });
});
