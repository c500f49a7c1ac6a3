import { describe, expect, it } from 'vitest';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';
import { claimAsk, claimWant, heldDelay, unclaimed } from '../../src/batch/send/claims.ts';
import { job } from './jobs.ts';

/** The scheduler's inner rules, in-process: how much it claims, what it waits for, how often it looks again. */

describe('claimWant', () => {
  it('claims -c ahead of the sends, and never holds more than -c + --max-pending', () => {
    const limits = { concurrency: 4, maxPending: 10 };
    expect(claimWant(limits, 0, 0)).toBe(8);
    expect(claimWant(limits, 8, 8)).toBe(0);
    // Sends over, documents polling: the pending limit binds.
    expect(claimWant(limits, 0, 12)).toBe(2);
  });
});

describe('claimAsk', () => {
  it('a sole worker asks for what it can start; a shared one asks about more (at least 64)', () => {
    expect(claimAsk(false, 3)).toBe(3);
    expect(claimAsk(true, 3)).toBe(64);
    expect(claimAsk(true, 100)).toBe(400);
  });
});

describe('unclaimed', () => {
  const slice = [job(1), job(2), job(3), job(4)];
  it('granted as many as asked: the rest of the slice goes back in the queue, none is waited for', () => {
    const { kept, held } = unclaimed(slice, [{ key: job(1).key }, { key: job(3).key }], 2);
    expect(kept.map((j) => j.key)).toEqual([job(2).key, job(4).key]);
    expect(held).toEqual([]);
  });
  it('granted fewer than asked: the rest is held by live workers and waited for, not queued again', () => {
    const { kept, held } = unclaimed(slice, [{ key: job(1).key }], 2);
    expect(kept).toEqual([]);
    expect(held.map((j) => j.key)).toEqual([job(2).key, job(3).key, job(4).key]);
  });
});

describe('heldDelay', () => {
  it('looks again after 200 ms, then 1.5 times longer each round, up to the poll interval and 5 s', () => {
    const poll = { ...DEFAULT_POLL, maxIntervalMs: 60_000 };
    expect([0, 1, 2].map((r) => heldDelay(r, poll))).toEqual([200, 300, 450]);
    expect(heldDelay(20, poll)).toBe(5_000);
    expect(heldDelay(20, { ...poll, maxIntervalMs: 1_000 })).toBe(1_000);
  });
});
