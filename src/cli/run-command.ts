import { existsSync } from 'node:fs';
import { type Command, Option } from 'commander';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_PENDING,
  DEFAULT_STATE_HELP,
  DEFAULT_STATE_WAIT_MS,
  type StopSignal,
} from '../batch/options.ts';
import { DEFAULT_INLINE_MAX } from '../batch/route.ts';
import { durationFlag, sizeFlag } from '../flags/units.ts';
import { DEFAULT_POLL } from '../client/backoff.ts';
import type { RunFlags } from './flags.ts';
import { EXIT_CODES_TEXT } from './topics.ts';

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
  program
    .argument(
      '[inputs...]',
      'files, directories (recursed), glob patterns (quote them), !exclusions, or - for paths on stdin',
    )
    .option(
      '-o, --out <path>',
      'where records go: - (stdout, JSON Lines), FILE.json, FILE.jsonl, FILE.csv, DIR/ (one JSON per document), or a device, FIFO or /dev/fd/N (a stream)',
    )
    .option('--format <format>', 'json, jsonl, csv or dir; overrides the extension of -o')
    .option('--explode <field>', 'CSV: one row per row of this Table field, document columns repeated', collect, [])
    .addOption(
      new Option('--route <route>', 'force a route; auto chooses by size')
        .choices(['auto', 'inline', 'upload'])
        .default('auto'),
    )
    .option(
      '--inline-max <size>',
      'largest file sent inline (base64 adds a third): 500000, 512KB, 8MB',
      sizeFlag(DEFAULT_INLINE_MAX),
    )
    .option(
      '-c, --concurrency <n>',
      'files being sent at once (lowered automatically on 429)',
      String(DEFAULT_CONCURRENCY),
    )
    .option('--max-pending <n>', 'documents being polled at once', String(DEFAULT_MAX_PENDING))
    .option(
      '--poll-interval <duration>',
      'first delay between polls, x1.5 after each',
      durationFlag(DEFAULT_POLL.intervalMs),
    )
    .option('--poll-max-interval <duration>', 'longest delay between polls', durationFlag(DEFAULT_POLL.maxIntervalMs))
    .option(
      '--poll-timeout <duration>',
      'give up polling a document after this long (exit 5; a rerun resumes)',
      durationFlag(DEFAULT_POLL.timeoutMs),
    )
    .option(
      '--state <file|url>',
      `the journal that makes reruns resume and never pay twice: a file (.jsonl; .sqlite/.db shared by runs on this machine), or postgres://… shared by many workers (or EXTRACT_STATE_URL); default: the user's journal of the service, ${DEFAULT_STATE_HELP}`,
    )
    .option(
      '--lease <duration>',
      'with a shared journal (postgres://, .sqlite): how long a worker holds a document without renewing (renewed every third)',
      durationFlag(DEFAULT_LEASE_MS),
    )
    .option(
      '--state-wait <duration>',
      'with a shared journal (postgres://, .sqlite): how long to wait for the database when it is unreachable or locked (then exit 6)',
      durationFlag(DEFAULT_STATE_WAIT_MS),
    )
    .option('--no-state', 'keep no journal (a rerun sends everything again)')
    .option('--fresh', 'send every file again, whatever earlier runs recorded (the journal forgets nothing)')
    .option(
      '--retry-failed',
      'send again documents that failed in a way that may have cost something (failures that cost nothing are retried anyway)',
    )
    .option('--all-files', 'send every file found in directories and by patterns, not only PDFs and images')
    .option(
      '--follow-links',
      'follow symbolic links that lead out of a folder walked (a file named by itself is always read)',
    )
    .option('--ignore <pattern>', 'leave out files matching this glob (repeatable)', collect, [])
    .option('--dry-run', 'list each file, its route and page count, and the credits the run would cost; send nothing')
    .option('--max-credits <n>', 'stop submitting before the pages of this run would exceed n')
    .option('--report <file>', 'write the summary as JSON, one entry per document (- for stdout)')
    .option(
      '--review <file>',
      'write the completed documents with null fields, for a person, as JSON Lines (- for stdout)',
    )
    .option(
      '--move-done <dir>',
      'once its record is written, move each completed file into DIR (path under the folder kept; a clash gets "name (1).pdf")',
    )
    .option('--move-failed <dir>', 'likewise for files that failed in a way that fails again (set aside)')
    .option(
      '--settle <duration>',
      'leave files changed less than this long ago (still being written?) for the next run, with a line saying so; a bare number is seconds; default: off',
    )
    .option('--no-progress', 'plain timestamped lines instead of a progress bar')
    .option('-q, --quiet', 'print only errors')
    .option('-v, --verbose', 'print every request')
    .option('--api-key <key>', 'API key (ext_...); prefer EXTRACT_API_KEY or "extract config set api_key -"')
    .option('--base-url <url>', 'base URL of the service (or EXTRACT_BASE_URL, or the config store)')
    .option('--local', 'run against an in-process emulator (no account needed)')
    .addHelpText('after', EXIT_CODES_HELP)
    .action(async (inputs: string[], flags: RunFlags, command: Command) => {
      if (inputs.length === 0) command.help({ error: true });
      await refuseMistypedCommand(inputs[0]!, program);
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

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
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
