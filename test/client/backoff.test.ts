import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_POLL, DEFAULT_RETRY, parseRetryAfter, pollDelay } from '../../src/client/backoff.ts';

describe('backoff', () => {
  it('doubles from 500 ms with equal jitter, capped at 30 s', () => {
    const low = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, () => 0));
    const high = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, () => 0.999999));
    expect(low).toEqual([250, 500, 1000, 2000, 4000, 8000, 15000, 15000]);
    expect(high).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });
  it('any policy: each delay lies between half and all of min(cap, base x 2^(n-1)), so never 0 and never past the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 120_000 }),
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (baseMs, capMs, retry, r) => {
          const policy = { ...DEFAULT_RETRY, baseMs, capMs };
          const ceiling = Math.min(capMs, baseMs * 2 ** (retry - 1));
          const delay = backoffDelay(retry, () => r, policy);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
          expect(delay).toBeLessThanOrEqual(ceiling);
          expect(delay).toBeGreaterThan(0);
        },
      ),
    );
  });
  it('Retry-After: seconds or an HTTP date', () => {
    expect(parseRetryAfter('3', 0)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:10 GMT', 4000)).toBe(6000);
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});

describe('polling schedule', () => {
  it('follows the guidance: 2 s, x1.5, capped at 30 s', () => {
    const delays = Array.from({ length: 10 }, (_, i) => pollDelay(i));
    expect(delays).toEqual([2000, 3000, 4500, 6750, 10125, 15188, 22781, 30000, 30000, 30000]);
  });
  it('about 15 minutes of polls is some 35 requests, not hundreds', () => {
    let t = 0;
    let polls = 0;
    while (t < DEFAULT_POLL.timeoutMs) t += pollDelay(polls++);
    expect(polls).toBeLessThan(40);
  });
});
