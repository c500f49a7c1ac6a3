import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { StopSignal } from '../batch/options.ts';
import { RUN_FLAGS } from '../flags/batch.ts';
import { addFlags } from '../flags/commander.ts';
import { parseFlags } from '../flags/parse.ts';
import { EXIT_CODES } from '../errors.ts';
import { EXIT_CODES_TEXT, SHORT_USAGE } from './topics.ts';

const EXIT_CODES_HELP = `
${EXIT_CODES_TEXT}
Help topics: extract help environment, extract help exit-codes, extract help formats

Examples:
  extract --local 'fixtures/invoices/*.pdf' -o invoices.csv
  extract ./invoices/ -o results/ --ignore '**/drafts/**'
  find . -name '*.pdf' -newer last-run | extract - -o new.jsonl -q
  extract scans/*.pdf --dry-run --max-credits 500
`;

/**
 * `extract [options] <inputs...>`: the batch client, the root command. The action only
 * unpacks its arguments and forwards them to runBatch (src/batch/run.ts).
 */
export function registerRun(program: Command): void {
  // Root options are read before a subcommand only, so `extract get ID -o x.json` is get's -o.
  program.enablePositionalOptions();
  program.argument(
    '[inputs...]',
    'files, directories (recursed), glob patterns (quote them), !exclusions, http(s):// URLs, or - for paths or URLs on stdin; each document in a .zip, .tar, .tar.gz, .eml is sent as one of its own',
  );
  addFlags(program, RUN_FLAGS)
    .addHelpText('after', EXIT_CODES_HELP)
    .action(async (inputs: string[], raw: Record<string, unknown>, command: Command) => {
      if (inputs.length === 0) {
        process.stderr.write(SHORT_USAGE);
        process.exitCode = EXIT_CODES.usage;
        return;
      }
      await refuseMistypedCommand(inputs[0]!, program);
      const flags = parseFlags(RUN_FLAGS, raw);
      const { runBatchFromCli } = await import('./run-action.ts');
      const explicitState = command.getOptionValueSource('state') === 'cli';
      process.exitCode = await runBatchFromCli(inputs, flags, {
        explicitState,
        env: process.env,
        exitNow: (code) => process.exit(code),
        onSignal: (handler) => subscribeSignals(handler),
      });
    });
}

/**
 * A usage error when `input`, the first word, is probably a mistyped command ("sevre"):
 * before the root command's flags are parsed, so `extract sevre --port 1` says so too.
 */
export async function refuseMistypedCommand(input: string, program: Command): Promise<void> {
  const typo = mistypedCommand(
    input,
    program.commands.map((c) => c.name()),
  );
  if (typo === undefined) return;
  const { ExtractError } = await import('../errors.ts');
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

export function subscribeSignals(handler: (signal: StopSignal) => void): () => void {
  const onInt = (): void => handler('SIGINT');
  const onTerm = (): void => handler('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
}
