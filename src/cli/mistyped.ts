import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { ExtractError } from '../errors.ts';

/**
 * A usage error when `input`, the first word, is probably a mistyped command ("sevre"):
 * before the root command's flags are parsed, so `extract sevre --port 1` says so too.
 */
export function refuseMistypedCommand(input: string, program: Command): void {
  const typo = mistypedCommand(
    input,
    program.commands.map((c) => c.name()),
  );
  if (typo === undefined) return;
  throw new ExtractError(
    'usage',
    `unknown command "${input}": did you mean "extract ${typo}"? (to extract a file of that name, write ./${input})`,
  );
}

/**
 * The subcommand a first input that is not a path was probably meant to be ("serv", "lsiten"):
 * within two edits of a command's name. A path that exists is always an input.
 */
export function mistypedCommand(input: string, commands: string[], mayBePath = true): string | undefined {
  if (mayBePath && (/[/\\.*?[{!]/.test(input) || existsSync(input))) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of commands) {
    const distance = editDistance(input.toLowerCase(), name);
    if (distance <= 2 && distance < name.length / 2 + 1 && (best === undefined || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}

/** Damerau-Levenshtein (optimal string alignment): a swap of two letters is one edit. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
