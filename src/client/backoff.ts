/**
 * Retry schedule of the idempotent steps (upload-url, PUT, GET): exponential backoff with
 * "equal jitter" (half fixed, half random), so many clients that failed together do not
 * come back together, yet no retry fires immediately.
 */
export type RetryPolicy = {
  /** Attempts in all, the first included. */
  attempts: number;
  baseMs: number;
  capMs: number;
  /** The longest Retry-After we agree to wait; a longer one is treated as a failure. */
  maxRetryAfterMs: number;
};

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 500, capMs: 30_000, maxRetryAfterMs: 5 * 60_000 };

/** Delay before retry number `retry` (1 = the first retry). */
export function backoffDelay(retry: number, random: () => number, policy: RetryPolicy = DEFAULT_RETRY): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Retry-After is either delta-seconds or an HTTP date (RFC 9110 §10.2.3). Returns
 * milliseconds to wait, or undefined when the header is absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * The polling schedule of the spec's guidance: start at `intervalMs`, multiply by `factor`
 * after each poll, never above `maxIntervalMs`.
 */
export type PollPolicy = { intervalMs: number; factor: number; maxIntervalMs: number; timeoutMs: number };

export const DEFAULT_POLL: PollPolicy = {
  intervalMs: 2000,
  factor: 1.5,
  maxIntervalMs: 30_000,
  timeoutMs: 15 * 60_000,
};

/** Delay before poll number `poll` (0 = the first poll after submission). */
export function pollDelay(poll: number, policy: PollPolicy = DEFAULT_POLL): number {
  return Math.min(policy.maxIntervalMs, Math.round(policy.intervalMs * policy.factor ** poll));
}
