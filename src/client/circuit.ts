/**
 * The circuit breaker of a run: when the service has not answered for a while, stop
 * sending instead of grinding through every file's retries (41 files against a closed port
 * took two minutes before it). It opens after `failures` attempts in a row went unanswered
 * (no connection, a dropped connection, a gateway's 502/504) over at least `spanMs`; any
 * answer of the service closes the count again. Once open it stays open for the run:
 * everything not sent yet is reported "not submitted" and a rerun sends it.
 */
export type CircuitPolicy = { failures: number; spanMs: number };

const DEFAULT_CIRCUIT: CircuitPolicy = { failures: 5, spanMs: 5_000 };

export class Circuit {
  readonly #now: () => number;
  readonly #policy: CircuitPolicy;
  readonly #opened = new AbortController();
  #failures = 0;
  #since: number | undefined;
  #lastCause = '';

  constructor(now: () => number, policy: CircuitPolicy = DEFAULT_CIRCUIT) {
    this.#now = now;
    this.#policy = policy;
  }

  get isOpen(): boolean {
    return this.#opened.signal.aborted;
  }

  /** Aborted when the circuit opens: wakes every retry waiting on a backoff delay. */
  get signal(): AbortSignal {
    return this.#opened.signal;
  }

  /** The service answered (any status of its own): the outage, if any, is over. */
  answered(): void {
    if (this.isOpen) return;
    this.#failures = 0;
    this.#since = undefined;
  }

  /** An attempt got no answer from the service. Returns true when this opened the circuit. */
  unanswered(cause: string): boolean {
    if (this.isOpen) return false;
    const now = this.#now();
    this.#since ??= now;
    this.#failures++;
    this.#lastCause = cause;
    if (this.#failures >= this.#policy.failures && now - this.#since >= this.#policy.spanMs) {
      this.#opened.abort();
      return true;
    }
    return false;
  }

  /** "ECONNREFUSED on 5 attempts over 5.6 s", for the one line that says why the run stopped. */
  describe(): string {
    const seconds = ((this.#now() - (this.#since ?? this.#now())) / 1000).toFixed(1);
    return `${this.#lastCause} on ${this.#failures} attempts in a row over ${seconds} s`;
  }
}
