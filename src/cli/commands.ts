import { Argument, type Command, CommanderError, Option } from 'commander';
import { ENV_API_KEY, ENV_BASE_URL, ENV_CONFIG_DIR, ENV_STATE_URL } from '../config/env-names.ts';
import { ExtractError } from '../errors.ts';
import { COMPACT_FLAGS, GET_FLAGS, RUN_FLAGS, STATUS_FLAGS, WATCH_FLAGS } from '../flags/batch.ts';
import { addFlags } from '../flags/commander.ts';
import { CONFIG_FLAGS } from '../flags/common.ts';
import { parseFlags } from '../flags/parse.ts';
import { LISTEN_FLAGS, SERVE_FLAGS } from '../flags/servers.ts';
import type { FlagTable, FlagValues } from '../flags/spec.ts';
import { VERSION_FLAGS } from '../flags/tables.ts';
import { type Cli, cliOf } from './cli-context.ts';
import { mistypedCommand } from './mistyped.ts';
import { EXIT_CODES_TEXT, TOPIC_NAMES, TOPICS } from './topics.ts';

/**
 * Every command, declared once: its words, arguments, help and flag table, which `--help`,
 * completion and docs/reference.md read without running anything, and one door, the
 * `import()` of the module that runs it, opened only when the command runs (citty's
 * `Resolvable<CommandDef>`, changesets' one import per command). A command's module is a
 * function `(args, flags, cli)`: its arguments as commander parsed them, its flags as its table
 * parses them, and the process.
 */
export function registerCommands(program: Command, version: { version: string; line: string }): void {
  command(program, {
    name: 'serve',
    description:
      'run a local emulation of the extraction service: API, signed uploads, credits, background extraction, webhooks, email and inbound arrivals, fault injection, and its web application at /',
    flags: SERVE_FLAGS,
    door: async () => (await import('./serve-action.ts')).serveFromCli,
  });
  const config = program
    .command('config')
    .description(
      'Read and write the user config store (api_key, base_url, state_url, missing_marker, password_file); the file is readable by its owner only',
    )
    .addHelpText('after', CONFIG_HELP);
  const configCommand = <A extends unknown[]>(name: string, description: string, door: Door<typeof CONFIG_FLAGS, A>) =>
    command(config, { name, description, flags: CONFIG_FLAGS, door });
  configCommand(
    'set <key> [value]',
    'store a value; with no value (or "-") it is read from standard input, or asked for unseen on a terminal',
    async () => (await configModule()).configSetFromCli,
  );
  configCommand(
    'get <key>',
    'print a value (the API key as ext_…last4); exit 1 when not set',
    async () => (await configModule()).configGetFromCli,
  );
  configCommand('unset <key>', 'remove a value', async () => (await configModule()).configUnsetFromCli);
  configCommand(
    'list',
    'print every stored value as key=value (the API key masked)',
    async () => (await configModule()).configListFromCli,
  );
  configCommand('path', 'print the path of the config file', async () => (await configModule()).configPathFromCli);
  // The batch client is the root command. Root options are read before a subcommand only, so
  // `extract get ID -o x.json` is get's -o.
  program.enablePositionalOptions();
  command(program, {
    root: true,
    arguments: [
      [
        '[inputs...]',
        'files, directories (recursed), glob patterns (quote them), !exclusions, http(s):// URLs, or - for paths or URLs on stdin; each document in a .zip, .tar, .tar.gz, .eml is sent as one of its own',
      ],
    ],
    flags: RUN_FLAGS,
    help: RUN_HELP,
    door: async () => (await import('./run-action.ts')).runBatchFromCli,
  });
  command(program, {
    name: 'get',
    description: 'fetch stored documents by id and print them as records (JSON Lines by default)',
    arguments: [['<document_id...>', 'ids returned by an earlier run (see its records or --report)']],
    flags: GET_FLAGS,
    help: '\nExit codes: 0 all completed, 1 some failed or unknown, 2 usage, 4 key rejected, 5 still processing.\n',
    usageHint: '(run "extract get --help" for usage)',
    door: async () => (await import('./get-action.ts')).getFromCli,
  });
  command(program, {
    name: 'listen',
    description:
      'receive document.processed webhooks: authenticate, store durably, answer at once, deduplicate, write records',
    flags: LISTEN_FLAGS,
    help: LISTEN_HELP,
    door: async () => (await import('./listen-action.ts')).listenFromCli,
  });
  command(program, {
    name: 'status',
    description:
      'show a batch from its journal: documents by outcome, pages charged, each worker, the oldest still processing',
    flags: STATUS_FLAGS,
    help: STATUS_HELP,
    door: async () => (await import('./status-action.ts')).statusFromCli,
  });
  const journal = program.command('journal').description('Maintain the journal of sent documents');
  command(journal, {
    name: 'compact',
    description:
      'rewrite the journal keeping what each document needs (its latest state, its results): nothing is sent again, no result is lost',
    flags: COMPACT_FLAGS,
    help: COMPACT_HELP,
    door: async () => (await import('./journal-action.ts')).compactFromCli,
  });
  command(program, {
    name: 'watch',
    description: 'watch drop folders: send each new or changed file once it stops changing, until SIGINT/SIGTERM',
    arguments: [['<folders...>', 'folders to watch (with their subfolders)']],
    flags: WATCH_FLAGS,
    help: WATCH_HELP,
    door: async () => (await import('./watch-action.ts')).watchFromCli,
  });
  // The shell's conventions: help and topics are text of the start-up file, no door.
  program
    .command('help')
    .description(`show help for a command, or a topic: ${TOPIC_NAMES.join(', ')}`)
    .argument('[topic...]', `a command (serve, config set...) or a topic (${TOPIC_NAMES.join(', ')})`)
    .action((words: string[]) => {
      process.stdout.write(helpText(program, words));
    });
  command(program, {
    name: 'version',
    description: 'print the version, the Node.js runtime and the platform, and the service configured',
    flags: VERSION_FLAGS,
    door: async () => (await shellModule()).versionFromCli,
  });
  command(program, {
    name: 'completion',
    description: 'print a completion script for bash, zsh or fish (source it from your shell profile)',
    arguments: [new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish'])],
    flags: {},
    help: COMPLETION_HELP,
    door: async () => (await shellModule()).completionFromCli,
  });
  // Last: --version on every command above (a subcommand's flags would refuse it otherwise).
  versionEverywhere(program, version.line);
}

/** A command's module: it resolves to its exit code, or to anything else (nothing) for 0. */
type Run<T extends FlagTable, A extends unknown[]> = (args: A, flags: FlagValues<T>, cli: Cli) => Promise<unknown>;

/** The one `import()` of the module of `config`'s five commands, and of `version` and `completion`. */
const configModule = () => import('./config-action.ts');
const shellModule = () => import('./shell-action.ts');

/** The one `import()` of a command's module. */
type Door<T extends FlagTable, A extends unknown[]> = () => Promise<Run<T, A>>;

type CommandDef<T extends FlagTable, A extends unknown[]> = {
  /** Its name, with commander's syntax of arguments ('set <key> [value]'); none for the root. */
  name?: string;
  root?: true;
  description?: string;
  arguments?: ReadonlyArray<Argument | readonly [syntax: string, description: string]>;
  flags: T;
  /** Text after the flags in its --help. */
  help?: string;
  /** What a usage error adds, when not the root's hint. */
  usageHint?: string;
  door: Door<T, A>;
};

function command<const T extends FlagTable, A extends unknown[]>(parent: Command, def: CommandDef<T, A>): void {
  const c = def.root === true ? parent : parent.command(def.name!);
  if (def.description !== undefined) c.description(def.description);
  for (const argument of def.arguments ?? [])
    if (argument instanceof Argument) c.addArgument(argument);
    else c.argument(argument[0], argument[1]);
  addFlags(c, def.flags);
  if (def.help !== undefined) c.addHelpText('after', def.help);
  if (def.usageHint !== undefined) c.showHelpAfterError(def.usageHint);
  c.action(async () => {
    const flags = parseFlags(def.flags, c.opts());
    const run = await def.door();
    // The arguments its name and `arguments` declare, as commander parsed them: the module's tuple.
    const code = await run(c.processedArgs as A, flags, cliOf(c, parent));
    if (typeof code === 'number') process.exitCode = code;
  });
}

/** `--version` on every command, with the runtime, as the root's. */
function versionEverywhere(command: Command, versionLine: string): void {
  for (const sub of command.commands) {
    if (sub.options.every((o) => o.long !== '--version')) {
      sub.addOption(new Option('-V, --version', 'print the version, runtime and platform'));
      sub.on('option:version', () => {
        process.stdout.write(`${versionLine}\n`);
        // As commander's own --version ends: main.ts turns this into exit 0.
        throw new CommanderError(0, 'commander.version', versionLine);
      });
    }
    versionEverywhere(sub, versionLine);
  }
}

/** The text of `extract help WORDS...`. An unknown word is a usage error naming what there is. */
function helpText(program: Command, words: string[]): string {
  if (words.length === 0) return program.helpInformation();
  const topic = words.length === 1 ? (TOPICS as Record<string, { text: string }>)[words[0]!] : undefined;
  if (topic !== undefined) return topic.text;
  let command = program;
  for (const word of words) {
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub === undefined) {
      const names = [...command.commands.map((c) => c.name()), ...(command === program ? TOPIC_NAMES : [])];
      const typo = mistypedCommand(word, names, false);
      throw new ExtractError(
        'usage',
        `no help for "${words.join(' ')}"${typo === undefined ? '' : `: did you mean "extract help ${[...words.slice(0, words.indexOf(word)), typo].join(' ')}"?`} (commands: ${command.commands.map((c) => c.name()).join(', ')}${command === program ? `; topics: ${TOPIC_NAMES.join(', ')}` : ''})`,
      );
    }
    command = sub;
  }
  return command.helpInformation();
}

const RUN_HELP = `
${EXIT_CODES_TEXT}
Help topics: extract help environment, extract help exit-codes, extract help formats

Examples:
  extract --local 'fixtures/invoices/*.pdf' -o invoices.csv
  extract ./invoices/ -o results/ --ignore '**/drafts/**'
  find . -name '*.pdf' -newer last-run | extract - -o new.jsonl -q
  extract scans/*.pdf --dry-run --max-credits 500
`;

const CONFIG_HELP = `
Keys: api_key (starts with ext_), base_url (https://…), state_url (postgres://…, a journal shared by many workers;
its password is shown as ***).
Precedence: --api-key/--base-url/--state, then ${ENV_API_KEY}/${ENV_BASE_URL}/${ENV_STATE_URL}, then this store.
${ENV_CONFIG_DIR} moves the store to another directory.

Examples:
  extract config set api_key                        (asks for the key, not echoed: kept out of shell history)
  printf %s "$KEY" | extract config set api_key      (reads it from standard input)
  extract config set base_url https://extract.example.com
  extract config list
`;

const LISTEN_HELP =
  '\nEnvironment: EXTRACT_LISTEN_TOKEN (bearer token), EXTRACT_LISTEN_PASSWORD (basic password).\n' +
  'It says "Listening on <url>" on stderr ({"type":"listening","url":...} with --json); without -o,\n' +
  'stdout holds only the records, as JSON Lines (extract listen | jq -c .).\n' +
  'Exit codes: 0 stopped by SIGINT/SIGTERM, 2 usage, 9 another extract listen holds the --data-dir.\n';

const STATUS_HELP = `
Examples:
  extract status --state "$EXTRACT_STATE_URL"
  extract status --state postgres://extract@db.internal/nightly --json | jq .workers
  extract status --needs-review --failed

Exit codes: 0 shown, 2 usage, 6 the database could not be used.
`;

const COMPACT_HELP = `
Examples:
  extract journal compact
  extract journal compact --state ./.extract-state.jsonl

Exit codes: 0 compacted, 2 usage (no journal, a PostgreSQL journal, or a run is sending through it).
`;

const WATCH_HELP = `
Files are sent once their size and mtime have not changed for --settle; a file still open for
writing by a process of this machine waits. Records are appended as documents complete:
JSON Lines (-o - or FILE.jsonl), CSV (one header) or DIR/ (one JSON per document). One log
line per document on stderr. The journal is the batch run's: a watcher and a cron run of
extract on the same folder pay each document once, and a restart sends nothing twice.

Exit codes:
  0    stopped by SIGINT/SIGTERM (documents in flight are resumed by the next run)
  2    usage or configuration error (no such folder, -o FILE.json, no API key)
  4    the service rejected the API key
  6    the journal could not be used
  8    the output could not be written (results are in the journal: fix it and restart)
  9    another run holds the journal (a .jsonl --state file): stop it, or use another --state

Examples:
  extract watch ./inbox -o results.jsonl
  extract watch /srv/scans --settle 10s --rescan 5m --no-events -o /srv/results/
`;

const COMPLETION_HELP = `
Examples:
  source <(extract completion bash)                          # bash, in ~/.bashrc
  source <(extract completion zsh)                           # zsh, in ~/.zshrc
  extract completion fish > ~/.config/fish/completions/extract.fish

It offers commands, flags, a flag's choices, and files after a flag whose value is a path or
for path arguments; after a flag whose value is a number, a duration or a key it offers nothing.
`;
