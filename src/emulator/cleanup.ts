/**
 * The deployed service's clean-up job: when its platform stops an inline request (the function's
 * time limit), the document stays processing and its pages reserved until this job fails it and
 * refunds them, minutes later, not at once. Times are kept as timers only: after a restart,
 * Gateway.resume() schedules each such document again from its creation time.
 */
export class Cleanup {
  readonly #refund: (documentId: string) => void;
  readonly #now: () => number;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(input: { refund: (documentId: string) => void; now: () => number }) {
    this.#refund = input.refund;
    this.#now = input.now;
  }

  /** Refunds the document at `atMs` (at once if that has passed). */
  refundAt(documentId: string, atMs: number): void {
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        this.#refund(documentId);
      },
      Math.max(0, atMs - this.#now()),
    );
    // A pending refund never keeps the process alive: a stopped server's documents wait for the next start.
    timer.unref();
    this.#timers.add(timer);
  }

  /** Drops the pending refunds (the server is stopping; the store closes after this). */
  close(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}
