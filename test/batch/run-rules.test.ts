import { describe, expect, it } from 'vitest';
import { HASH_WHILE_SENDING_ABOVE } from '../../src/batch/options.ts';
import { hashWhileSendingAbove, recordedAtPlan } from '../../src/batch/plan/plan.ts';

/** The plan step's inner rules (plan/plan.ts), in-process: when large files are hashed on their upload, which records the plan writes. */

describe('hashWhileSendingAbove', () => {
  const plain = { dryRun: false, maxCredits: undefined, hashWhileSendingAbove: undefined };
  it('a plain run with a file journal hashes large files on their upload (the default size, or the one given)', () => {
    expect(hashWhileSendingAbove(plain, false, false)).toBe(HASH_WHILE_SENDING_ABOVE);
    expect(hashWhileSendingAbove({ ...plain, hashWhileSendingAbove: 5 }, false, false)).toBe(5);
  });
  it('not for a dry run, --max-credits (pages are counted first), a shared journal or other keys in the journal', () => {
    expect(hashWhileSendingAbove({ ...plain, dryRun: true }, false, false)).toBeUndefined();
    expect(hashWhileSendingAbove({ ...plain, maxCredits: 0 }, false, false)).toBeUndefined();
    expect(hashWhileSendingAbove(plain, true, false)).toBeUndefined();
    expect(hashWhileSendingAbove(plain, false, true)).toBeUndefined();
  });
});

describe('recordedAtPlan', () => {
  it('a done document is recorded at the plan, whatever the journal', () => {
    expect(recordedAtPlan('done', false, false)).toBe(true);
    expect(recordedAtPlan('done', true, false)).toBe(true);
  });
  it('a left one is, unless a shared journal lets a live worker claim it (a dry run claims nothing)', () => {
    expect(recordedAtPlan('leave', false, false)).toBe(true);
    expect(recordedAtPlan('leave', true, false)).toBe(false);
    expect(recordedAtPlan('leave', true, true)).toBe(true);
  });
  it('a document to send or collect is recorded by the send step', () => {
    expect(recordedAtPlan('submit', false, false)).toBe(false);
    expect(recordedAtPlan('resume', false, true)).toBe(false);
  });
});
