/** --color's values (flags/common.ts offers them). */
export const COLOR_CHOICES = ['auto', 'always', 'never'] as const;
export type ColorChoice = (typeof COLOR_CHOICES)[number];
/** chalk's levels: none, 16 colours, 256, truecolor. */
export type ColorLevel = 0 | 1 | 2 | 3;

/**
 * How colourful stderr is, by --color: always and never are final (no-color.org: a flag wins
 * over NO_COLOR); auto reads FORCE_COLOR first (as Node and chalk do: 0 or false is none, 2 and
 * 3 more colours), then NO_COLOR (any non-empty value: none), then whether stderr is a terminal
 * that can show them.
 */
export function colorLevel(choice: ColorChoice, isTTY: boolean, env: Record<string, string | undefined>): ColorLevel {
  const forced = forcedLevel(env.FORCE_COLOR);
  if (choice === 'never') return 0;
  if (choice === 'always') return forced !== undefined && forced > 0 ? forced : 1;
  if (forced !== undefined) return forced;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  return isTTY && env.TERM !== 'dumb' ? 1 : 0;
}

/** FORCE_COLOR's level; undefined when it is not set. */
function forcedLevel(value: string | undefined): ColorLevel | undefined {
  if (value === undefined) return undefined;
  if (value === '0' || value === 'false') return 0;
  if (value === '2' || value === '3') return Number(value) as ColorLevel;
  return 1;
}
