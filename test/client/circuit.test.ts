import { describe, expect, it } from 'vitest';
import { Circuit, DEFAULT_CIRCUIT } from '../../src/client/circuit.ts';

/**
 * The circuit breaker on its own, on a clock the test moves: it opens only when `failures`
 * attempts in a row went unanswered AND they span at least `spanMs`; any answer closes the
 * count; once open it stays open for the run (there is no half-open state: a rerun is the
 * retry, so the breaker never sends a probe of its own).
 */

function clocked(policy = DEFAULT_CIRCUIT): { circuit: Circuit; at: (ms: number) => void } {
  let t = 50_000;
  const start = t;
  return { circuit: new Circuit(() => t, policy), at: (ms) => (t = start + ms) };
}

describe('circuit', () => {
  it('5 failures inside 5 s keep it closed; the first failure 5 s after the first opens it', () => {
    const { circuit, at } = clocked();
    for (const ms of [0, 1000, 2000, 3000, 4999]) {
      at(ms);
      expect(circuit.unanswered('ECONNREFUSED')).toBe(false);
    }
    expect(circuit.isOpen).toBe(false);
    at(5000);
    expect(circuit.unanswered('ECONNREFUSED')).toBe(true);
    expect(circuit.isOpen).toBe(true);
  });

  it('a long outage of few attempts does not open it: 4 failures over a minute', () => {
    const { circuit, at } = clocked();
    for (const ms of [0, 20_000, 40_000, 60_000]) {
      at(ms);
      expect(circuit.unanswered('ETIMEDOUT')).toBe(false);
    }
    expect(circuit.isOpen).toBe(false);
    at(60_001);
    expect(circuit.unanswered('ETIMEDOUT')).toBe(true);
  });

  it('an answer closes the count, and the span starts again at the next failure', () => {
    const { circuit, at } = clocked();
    for (const ms of [0, 1000, 2000, 3000]) {
      at(ms);
      circuit.unanswered('ECONNRESET');
    }
    at(3500);
    circuit.answered();
    // Four more, the last 6 s after the very first failure but only 1.5 s after the answer.
    for (const ms of [4000, 4500, 5000, 6000]) {
      at(ms);
      expect(circuit.unanswered('ECONNRESET')).toBe(false);
    }
    // The fifth since the answer, under 5 s after the first of them: still closed.
    at(8999);
    expect(circuit.unanswered('ECONNRESET')).toBe(false);
    at(9000);
    expect(circuit.unanswered('ECONNRESET')).toBe(true);
  });

  it('after an answer the failures count from zero: two more, 5 s apart, do not open it', () => {
    const { circuit, at } = clocked();
    for (const ms of [0, 100, 200, 300]) {
      at(ms);
      circuit.unanswered('ECONNRESET');
    }
    circuit.answered();
    at(1000);
    expect(circuit.unanswered('ECONNRESET')).toBe(false);
    at(6000);
    expect(circuit.unanswered('ECONNRESET')).toBe(false);
    expect(circuit.isOpen).toBe(false);
  });

  it('once open it stays open: an answer, or more failures, change nothing; it said so once', () => {
    const { circuit, at } = clocked();
    const opened: boolean[] = [];
    for (let i = 0; i <= 5; i++) {
      at(i * 1250);
      opened.push(circuit.unanswered('HTTP 502'));
    }
    expect(opened).toEqual([false, false, false, false, true, false]);
    const why = circuit.describe();
    circuit.answered();
    expect(circuit.isOpen).toBe(true);
    // What it tells the user is still the outage that opened it.
    expect(circuit.describe()).toBe(why);
    at(600_000);
    expect(circuit.unanswered('HTTP 502')).toBe(false);
    expect(circuit.isOpen).toBe(true);
  });

  it('its signal aborts when it opens (it wakes every retry waiting on a backoff delay), and not before', () => {
    const { circuit, at } = clocked({ failures: 2, spanMs: 100 });
    let woken = 0;
    circuit.signal.addEventListener('abort', () => woken++);
    circuit.unanswered('ECONNREFUSED');
    at(99);
    circuit.unanswered('ECONNREFUSED');
    expect(circuit.signal.aborted).toBe(false);
    at(100);
    circuit.unanswered('ECONNREFUSED');
    expect(circuit.signal.aborted).toBe(true);
    expect(woken).toBe(1);
  });

  it('describe: the last cause, the failures in a row, and the span in seconds', () => {
    const { circuit, at } = clocked();
    at(0);
    circuit.unanswered('ECONNREFUSED');
    for (const ms of [1000, 2000, 3000, 5600]) {
      at(ms);
      circuit.unanswered(ms === 5600 ? 'HTTP 504' : 'ECONNREFUSED');
    }
    expect(circuit.describe()).toBe('HTTP 504 on 5 attempts in a row over 5.6 s');
  });
});
