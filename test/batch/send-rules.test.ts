import { describe, expect, it } from 'vitest';
import { decidedOutcome, recordCopies } from '../../src/batch/send/send.ts';
import { CopyIndex, hashKey, PlanStore } from '../../src/batch/plan/planned.ts';
import { createRecords, MemoryRecords } from '../../src/batch/records.ts';
import { completedRecord } from '../../src/outputs/record.ts';
import type { KnownState } from '../../src/journal/journal.ts';
import { job } from './jobs.ts';

/** The send step's inner rules, in-process: which input leads a document, and what a decided document reports. */

const completed: KnownState = {
  fact: 'completed',
  at: '',
  sha256: 'sha1',
  target: 't',
  file: '1.pdf',
  route: 'inline',
  document_id: 'doc_1',
  page_count: 1,
  results: {},
};
const failed: KnownState = {
  fact: 'failed',
  at: '',
  sha256: 'sha1',
  target: 't',
  file: '1.pdf',
  route: 'inline',
  document_id: 'doc_1',
  reason: 'unreadable',
  retryable: false,
};

describe('copies: one document per content', () => {
  it('the first input of a content leads; a later one with the same key is its copy, recorded under its own name', () => {
    const store = PlanStore.inMemory();
    const firsts = new CopyIndex(store);
    const a = job(0);
    const b = job(1);
    const aAgain = {
      ...job(0),
      ordinal: 2,
      input: { ...a.input, file: 'copy.pdf', path: '/in/copy.pdf', realPath: '/in/copy.pdf' },
    };
    for (const j of [a, b]) {
      store.add(j);
      expect(firsts.firstOf(j)).toBeUndefined();
      firsts.add(j);
    }
    store.add(aAgain);
    expect(firsts.firstOf(aAgain)).toBe(0);
    const records = createRecords(undefined, undefined, new MemoryRecords());
    records.emit(0, {
      ...completedRecord({ file: '0.pdf', document_id: 'doc_a', route: 'inline' }, 1, {}),
      outcome: 'completed',
      sha256: a.sha256,
    });
    records.emit(1, {
      ...completedRecord({ file: '1.pdf', document_id: 'doc_b', route: 'inline' }, 1, {}),
      outcome: 'completed',
      sha256: b.sha256,
    });
    recordCopies({ jobs: store, copies: new Map([[2, 0]]) }, records);
    expect(records.get(2)).toEqual({ ...records.get(0), file: 'copy.pdf' });
  });

  it('keys whose hashes collide are told apart by the key itself', () => {
    // Two distinct keys with one 30-bit hash: a birthday search finds a pair within ~100,000 keys.
    const seen = new Map<number, number>();
    let pair: [number, number] | undefined;
    for (let i = 0; pair === undefined && i < 1_000_000; i++) {
      const h = hashKey(job(i).key);
      const earlier = seen.get(h);
      if (earlier === undefined) seen.set(h, i);
      else pair = [earlier, i];
    }
    if (pair === undefined) throw new Error('no two keys share a hash in a million: the hash is wider than it says');
    const [x, y] = [job(pair[0]), job(pair[1])].map((j, ordinal) => ({ ...j, ordinal }));
    expect(x!.key).not.toBe(y!.key);
    const store = PlanStore.inMemory([x!, y!]);
    const firsts = new CopyIndex(store);
    firsts.add(x!);
    expect(firsts.firstOf(y!)).toBeUndefined();
    firsts.add(y!);
    expect(firsts.firstOf({ ...y!, ordinal: 2 })).toBe(1);
    expect(firsts.firstOf({ ...x!, ordinal: 3 })).toBe(0);
  });
});

describe('decidedOutcome', () => {
  it('a document another worker completed during the batch is other_worker; one it failed is failed', () => {
    expect(decidedOutcome({ ...job(1), action: 'done', prior: completed }, true)).toBe('other_worker');
    expect(decidedOutcome({ ...job(1), action: 'leave', prior: failed }, true)).toBe('failed');
  });

  it('a document an earlier run settled is skipped when done, left otherwise', () => {
    expect(decidedOutcome({ ...job(1), action: 'done', prior: completed }, false)).toBe('skipped');
    expect(decidedOutcome({ ...job(1), action: 'leave', prior: failed }, false)).toBe('left');
  });
});
