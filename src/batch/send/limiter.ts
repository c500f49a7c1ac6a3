/**
 * A counting semaphore whose limit can move: the send slots of a batch. On a 429 the limit
 * halves (multiplicative decrease); after a run of `limit` successes it grows by one
 * (additive increase), up to the -c the user asked for. That is TCP's AIMD, so a big batch
 * settles at the rate the service accepts instead of hammering it.
 */
export class Limiter {
  #limit: number;
  readonly #max: number;
  #active = 0;
  #successes = 0;
  #lastDecreaseAt = Number.NEGATIVE_INFINITY;
  readonly #waiting: Array<() => void> = [];
  readonly #now: () => number;
  /** 429s that arrive together (from requests sent together) count as one congestion signal. */
  readonly #quietMs: number;

  constructor(max: number, options: { now?: () => number; quietMs?: number } = {}) {
    this.#max = max;
    this.#limit = max;
    this.#now = options.now ?? Date.now;
    this.#quietMs = options.quietMs ?? 1000;
  }

  get limit(): number {
    return this.#limit;
  }
  get active(): number {
    return this.#active;
  }

  async acquire(): Promise<() => void> {
    if (this.#active < this.#limit) this.#active++;
    // A waiter is woken with its slot already counted (see #wake), so nothing can overtake it.
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
      this.#wake();
    };
  }

  /** Multiplicative decrease, at most once per quiet period. */
  rateLimited(): void {
    const now = this.#now();
    this.#successes = 0;
    if (now - this.#lastDecreaseAt < this.#quietMs) return;
    this.#lastDecreaseAt = now;
    this.#limit = Math.max(1, Math.floor(this.#limit / 2));
  }

  /** Additive increase after a full window of successes. */
  succeeded(): void {
    if (this.#limit >= this.#max) return;
    this.#successes++;
    if (this.#successes >= this.#limit) {
      this.#successes = 0;
      this.#limit++;
      this.#wake();
    }
  }

  #wake(): void {
    while (this.#active < this.#limit) {
      const next = this.#waiting.shift();
      if (!next) return;
      this.#active++;
      next();
    }
  }
}
