/**
 * What a flag is, declared once: its name (the table's key), short alias,
 * value name, description, default and kind. From one table per command are made the
 * commander options (commander.ts), the values' type (FlagValues, below), their parsing and
 * defaults (parse.ts), and, through commander, --help, docs/reference.md, man/extract.1 and
 * the completion scripts. This module and the tables import nothing heavy: they are part of
 * the start-up file that `extract --help` loads.
 */

type Common = {
  /** One letter: `-o` for `out`. */
  short?: string;
  /** As --help shows it. */
  description: string;
};

/** A flag that takes a value; `value` names it in --help (`--out <path>`). */
type Valued = Common & { value: string };

export type FlagSpec =
  /** --fresh: true when given, else false. */
  | (Common & { kind: 'switch' })
  /**
   * --no-progress, --no-state: the table's key is `noProgress` (true when given). When the table
   * also holds `progress`, the two are one commander attribute: the later on the line wins.
   */
  | (Common & { kind: 'off' })
  /** Text as typed, or one of `choices`. `conflicts`: the key of a flag it cannot go with. */
  | (Valued & { kind: 'text'; default?: string; choices?: readonly string[]; conflicts?: string })
  /** A file or directory (or, for --state, a URL): completion offers files after it. */
  | (Valued & { kind: 'path'; default?: string; conflicts?: string })
  /**
   * Repeatable text (--ignore a --ignore b): every value, in order; none is []. `parse`: the
   * values into what the command reads, or a usage error (--explode: one path, typed twice is a mistake).
   */
  | (Valued & { kind: 'list'; parse?: (values: string[], flag: string) => unknown })
  /** Bytes, written 500000, 512KB, 8MB (units.ts parseSize); the default in bytes. */
  | (Valued & { kind: 'size'; default?: number })
  /**
   * Milliseconds, written 500ms, 2s, 15m (units.ts parseDuration); the default in ms.
   * `atLeast`: the smallest value, and why, for the usage error.
   */
  | (Valued & { kind: 'duration'; default?: number; atLeast?: { ms: number; why: string } })
  /** A whole number of at least `min` (1 unless said). */
  | (Valued & { kind: 'count'; default?: number; min?: number })
  /** Anything else (a port, a scale factor): `parse` turns the text into the value or throws a usage error. */
  | (Valued & { kind: 'custom'; default?: string; parse: (text: string, flag: string) => unknown });

export type FlagTable = Readonly<Record<string, FlagSpec>>;

/** A table, its literal types kept, so FlagValues can read each flag's kind and default. */
export function defineFlags<const T extends FlagTable>(table: T): T {
  return table;
}

/** The flags of `table` named in `keys`, in that order: a command that shares another's flags. */
export function pickFlags<const T extends FlagTable, const K extends keyof T & string>(
  table: T,
  keys: readonly K[],
): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, table[k]])) as Pick<T, K>;
}

type Given<S, V> = S extends { default: unknown } ? V : V | undefined;

/** What a flag's value is once parsed: a defaulted flag always has one. */
type FlagValue<S extends FlagSpec> = S extends { kind: 'switch' | 'off' }
  ? boolean
  : S extends { kind: 'list'; parse: (values: string[], flag: string) => infer R }
    ? R
    : S extends { kind: 'list' }
      ? string[]
      : S extends { kind: 'size' | 'duration' | 'count' }
        ? Given<S, number>
        : S extends { kind: 'custom'; parse: (text: string, flag: string) => infer R }
          ? Given<S, R>
          : S extends { choices: readonly (infer C)[] }
            ? Given<S, C>
            : Given<S, string>;

/** The parsed flags of a command, keyed as its table is: the type is the table's, written nowhere else. */
export type FlagValues<T extends FlagTable> = { -readonly [K in keyof T]: FlagValue<T[K]> };

/** `inlineMax` -> `inline-max`: a flag's long name from its key. */
function longName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The commander syntax of a flag: `-o, --out <path>`, `--no-state` (completion.ts reads it without commander). */
export function flagsOf(key: string, spec: FlagSpec): string {
  const short = spec.short === undefined ? '' : `-${spec.short}, `;
  const value = 'value' in spec ? ` <${spec.value}>` : '';
  return `${short}--${longName(key)}${value}`;
}

/** How commander names a flag's value: `--no-state` sets `state`. */
export function attributeOf(key: string, spec: FlagSpec): string {
  return spec.kind === 'off' ? key.charAt(2).toLowerCase() + key.slice(3) : key;
}

/** How a usage error names a flag: `-c/--concurrency`, `--inline-max`. */
export function flagLabel(key: string, spec: FlagSpec): string {
  return `${spec.short === undefined ? '' : `-${spec.short}/`}--${longName(key)}`;
}
