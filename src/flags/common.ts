import { COLOR_CHOICES } from '../ui/color.ts';
import { defineFlags, type FlagValues } from './spec.ts';

/** --color's choices: auto reads the terminal, NO_COLOR and FORCE_COLOR (ui/color.ts). */

/**
 * What every command takes, declared once: how much it says on stderr, and its colours. A
 * command whose -q or -v means something more says so in its own description.
 */
export const COMMON_FLAGS = defineFlags({
  quiet: { kind: 'switch', short: 'q', description: 'stderr: only errors and the reason of a non-zero exit' },
  verbose: {
    kind: 'switch',
    short: 'v',
    description: 'stderr: more detail (every request, where the command sends any)',
  },
  color: {
    kind: 'text',
    value: 'when',
    description: 'colours on stderr: auto (a terminal; NO_COLOR set turns them off, FORCE_COLOR on), always, or never',
    choices: COLOR_CHOICES,
    default: 'auto',
  },
});

/** `extract config set|get|unset|list|path`: each takes --json and the common flags. */
export const CONFIG_FLAGS = defineFlags({
  json: {
    kind: 'switch',
    description:
      'stdout: one JSON object (key, value masked as shown, the variable overriding it, the file; docs/json.md)',
  },
  ...COMMON_FLAGS,
});
export type ConfigValues = FlagValues<typeof CONFIG_FLAGS>;
