import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_POLL, DEFAULT_RETRY, parseRetryAfter, pollDelay } from '../../src/client/backoff.ts';

describe('backoff', () => {
  it('doubles from 500 ms with equal jitter, capped at 30 s', () => {
    const low = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, () => 0));
    const high = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, () => 0.999999));
    expect(low).toEqual([250, 500, 1000, 2000, 4000, 8000, 15000, 15000]);
    expect(high).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });
  it('never retries immediately', () => {
    for (let n = 1; n < DEFAULT_RETRY.attempts; n++) expect(backoffDelay(n, () => 0)).toBeGreaterThan(0);
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
