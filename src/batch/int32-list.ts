/**
 * Numbers in the order pushed, four bytes each (a growable Int32Array): what a run keeps per
 * document where an array of objects or a map of strings would grow with the batch (the send
 * queue's ordinals, the stat cache's lookups).
 */
export class Int32List {
  #items = new Int32Array(1024);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(n: number): void {
    if (this.#length === this.#items.length) {
      const grown = new Int32Array(this.#items.length * 2);
      grown.set(this.#items);
      this.#items = grown;
    }
    this.#items[this.#length++] = n;
  }

  at(i: number): number {
    if (i < 0 || i >= this.#length) throw new RangeError(`list: no item ${i}`);
    return this.#items[i] as number;
  }

  set(i: number, n: number): void {
    if (i < 0 || i >= this.#length) throw new RangeError(`list: no item ${i}`);
    this.#items[i] = n;
  }
}
