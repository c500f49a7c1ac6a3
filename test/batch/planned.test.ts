import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Int32List } from '../../src/batch/int32-list.ts';
import { PlanStore } from '../../src/batch/plan/planned.ts';
import type { Job } from '../../src/batch/plan/jobs.ts';
import type { KnownState } from '../../src/journal/journal.ts';

/**
 * The plan step writes each job to disk as it is decided and the send and
 * finish steps read it back. Whatever a job holds (a path that is not UTF-8, what the journal
 * knew of it with its results, a request to resend), it must come back as it was planned.
 */

const text = fc.string({ unit: fc.constantFrom('a', 'é', '"', '\\', '\n', '\t', ' ', '/', 'ü', '\u2028', '😀') });
const path = fc.oneof(
  text.map((t) => `/in/${t}.pdf`),
  // Latin-1 names (not UTF-8): the path is kept as its bytes.
  fc.uint8Array({ minLength: 1, maxLength: 12 }).map((b) => Buffer.concat([Buffer.from('/in/'), Buffer.from(b)])),
);
const prior: fc.Arbitrary<KnownState | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.record({
    fact: fc.constant('completed' as const),
    at: fc.constant('2026-11-27T00:00:00.000Z'),
    file: text,
    sha256: fc.constant('a'.repeat(64)),
    route: fc.constantFrom('inline' as const, 'upload' as const),
    document_id: text,
    page_count: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: null }),
    results: fc.dictionary(text, fc.oneof(text, fc.integer(), fc.constant(null), fc.array(fc.dictionary(text, text)))),
  }) as fc.Arbitrary<KnownState>,
);
const job = (ordinal: number): fc.Arbitrary<Job> =>
  fc.record({
    ordinal: fc.constant(ordinal),
    input: fc.record({
      file: text,
      path,
      realPath: text,
      size: fc.nat(),
      explicit: fc.boolean(),
      rel: fc.option(text, { nil: undefined }),
    }),
    sha256: fc.constantFrom('', 'b'.repeat(64)),
    mimeType: fc.constantFrom('application/pdf', 'image/png'),
    key: text,
    target: fc.option(text, { nil: undefined }),
    decision: fc.record({ route: fc.constantFrom('inline' as const, 'upload' as const), why: text }),
    action: fc.constantFrom('submit' as const, 'resume' as const, 'done' as const, 'leave' as const),
    prior,
    pages: fc.option(fc.nat(), { nil: undefined }),
  }) as fc.Arbitrary<Job>;

/** A job as JSON would compare it: fields set to undefined are as absent. */
const plain = (j: Job) => JSON.parse(JSON.stringify({ ...j, input: { ...j.input, path: undefined } })) as unknown;

describe('the plan on disk', () => {
  it('reads back every job as it was planned (property: any paths, priors, results)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => job(i)))),
        (jobs) => {
          const store = PlanStore.open();
          try {
            for (const j of jobs) store.add(j);
            expect(store.count).toBe(jobs.length);
            const back = [...store];
            for (const [i, j] of jobs.entries()) {
              const got = back[i] as Job;
              expect(plain(got)).toEqual(plain(j));
              // A path that is bytes comes back as the same bytes (not as a string that opens nothing).
              if (typeof j.input.path === 'string') expect(got.input.path).toBe(j.input.path);
              else expect(Buffer.isBuffer(got.input.path) && got.input.path.equals(j.input.path)).toBe(true);
              expect(store.get(i)).toEqual(got);
            }
          } finally {
            store.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps no job in memory: a stored job is collectable, and a job out of order is refused', () => {
    const store = PlanStore.open();
    const one = fc.sample(job(0), { numRuns: 1, seed: 7 })[0] as Job;
    store.add(one);
    expect(() => store.add({ ...one, ordinal: 5 })).toThrow(/out of order/);
    expect(() => store.get(1)).toThrow(/no job 1/);
    expect(PlanStore.inMemory([one]).get(0)).toBe(one);
    // A job counted but not stored (a done document no later step reads) keeps its place, and cannot be read.
    store.skip({ ...one, ordinal: 1 });
    expect(store.count).toBe(2);
    expect(() => store.get(1)).toThrow(/not stored/);
    expect(() => store.skip({ ...one, ordinal: 5 })).toThrow(/out of order/);
    // Read twice: two objects (from disk), equal.
    expect(store.get(0)).not.toBe(store.get(0));
    expect(store.get(0)).toEqual(store.get(0));
    store.close();
  });

  it('a list of numbers grows past its first block and answers in order', () => {
    const list = new Int32List();
    for (let i = 0; i < 1000; i++) list.push(i * 7);
    expect(list.length).toBe(1000);
    expect(list.at(999)).toBe(6993);
    expect(() => list.at(1000)).toThrow(RangeError);
  });
});
