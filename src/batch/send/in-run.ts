import type { Outcome } from '../outcome.ts';

/**
 * The contents this run is sending, by key, each with the outcome a second file of the same
 * content waits for (a large copy hashed on its upload takes its first file's outcome).
 */
export class InRun {
  readonly #outcomes = new Map<string, Promise<Outcome>>();
  readonly #resolve = new Map<string, (outcome: Outcome) => void>();

  /** The outcome of the content `key` this run is sending, if it is. */
  get(key: string): Promise<Outcome> | undefined {
    return this.#outcomes.get(key);
  }

  /** Content this run is sending: a second file with it waits for its outcome. */
  open(key: string): void {
    if (this.#outcomes.has(key)) return;
    let resolve: (o: Outcome) => void = () => {};
    this.#outcomes.set(key, new Promise<Outcome>((r) => (resolve = r)));
    this.#resolve.set(key, resolve);
  }

  /** The content `key` ended: whatever waits for it is told how. */
  ended(key: string, outcome: Outcome): void {
    this.#resolve.get(key)?.(outcome);
  }

  /** The content `key` is no longer sent by this run: what waits for it gets `outcome`. */
  abandon(key: string, outcome: Outcome): void {
    const resolve = this.#resolve.get(key);
    this.#outcomes.delete(key);
    this.#resolve.delete(key);
    resolve?.(outcome);
  }
}
