import { setTimeout as delay } from 'node:timers/promises';
import type { Dispatcher } from 'undici';

/** Levels of the client's log: `debug` is every request (-v), `warn` a retry or a fallback. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, message: string) => void;

/**
 * What the client takes from the outside world, injected so that backoff and polling
 * schedules are tested on a fake clock in milliseconds rather than by sleeping.
 */
export type ClientDeps = {
  /** undici dispatcher (Agent, MockAgent); the global one when absent. */
  dispatcher?: Dispatcher | undefined;
  now: () => number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1), for jitter. */
  random: () => number;
  log: Log;
};

/** ClientDeps.sleep on Node's timers: an abort rejects the timer, which here ends the wait. */
export function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => {});
}

export function defaultClientDeps(overrides: Partial<ClientDeps> = {}): ClientDeps {
  return {
    now: () => Date.now(),
    sleep: realSleep,
    random: Math.random,
    log: () => {},
    ...overrides,
  };
}
