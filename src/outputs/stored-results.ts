import type { Results } from '../contract/index.ts';

/**
 * Results read back from storage (the journal index) keep the JSON text they were stored as.
 * They are parsed only when something looks inside them (CSV's columns, a pretty-printed
 * JSON array); the JSON Lines writer and the index itself copy the text as it is, so a rerun
 * that writes 20,000 stored results neither parses nor re-serialises them.
 *
 * Such results are a read-only Proxy over the parsed value, so every reader (Object.entries,
 * JSON.stringify, property access) sees plain results. Its target holds the text and, once
 * read, the value; one handler serves them all (no closure or map entry per document).
 */

const TEXT = Symbol('stored results text');
const VALUE = Symbol('stored results value');
const NULL = Symbol('stored results hold a null');
const SELF = Symbol('stored results target');
type Stored = Results & { [TEXT]: string; [VALUE]?: Results; [NULL]?: boolean };

function read(target: Stored): Results {
  target[VALUE] ??= JSON.parse(target[TEXT]) as Results;
  return target[VALUE];
}

const handler: ProxyHandler<Stored> = {
  get: (target, key) => (key === TEXT ? target[TEXT] : key === SELF ? target : Reflect.get(read(target), key)),
  has: (target, key) => Reflect.has(read(target), key),
  ownKeys: (target) => Reflect.ownKeys(read(target)),
  getOwnPropertyDescriptor: (target, key) => Reflect.getOwnPropertyDescriptor(read(target), key),
  getPrototypeOf: () => Object.prototype,
  set: () => false,
  defineProperty: () => false,
  deleteProperty: () => false,
};

/** Results whose JSON text is `text` (stored by this program, from valid results). */
export function storedResults(text: string): Results {
  const target: Stored = { [TEXT]: text };
  return new Proxy(target, handler);
}

/** The stored text, if these results came from storage. */
export function storedText(results: unknown): string | undefined {
  if (typeof results !== 'object' || results === null) return undefined;
  const text: unknown = Reflect.get(results, TEXT);
  return typeof text === 'string' ? text : undefined;
}

/**
 * Whether stored results hold a null, by `scan` over their text, scanned once: a rerun's
 * record asks as it is written (needs_review) and again for the summary's review list.
 * Undefined for results that were not stored.
 */
export function storedHoldsNull(results: unknown, scan: (text: string) => boolean): boolean | undefined {
  if (typeof results !== 'object' || results === null) return undefined;
  const target: unknown = Reflect.get(results, SELF);
  if (typeof target !== 'object' || target === null || !(TEXT in target)) return undefined;
  const stored = target as Stored;
  stored[NULL] ??= scan(stored[TEXT]);
  return stored[NULL];
}

/** The JSON text of results: the stored text when they came from storage, else serialised now. */
export function resultsJson(results: Results): string {
  return storedText(results) ?? JSON.stringify(results);
}
