import { describe, expect, it } from 'vitest';
import { decidedOutcome, groupCopies } from '../../src/batch/send.ts';
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

describe('groupCopies', () => {
  it('sends one document per content: the first input leads, later copies are recorded under it', () => {
    const a = job(1);
    const b = job(2);
    const aAgain = {
      ...job(1),
      input: { ...a.input, file: 'copy.pdf', path: '/in/copy.pdf', realPath: '/in/copy.pdf' },
    };
    const { copies, leaders } = groupCopies([a, b, aAgain]);
    expect(leaders).toEqual([a, b]);
    expect(copies.get(a.key)).toEqual([a, aAgain]);
    // A document of one input has no list: a batch of distinct files holds none (issue 26 item 1).
    expect(copies.has(b.key)).toBe(false);
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
