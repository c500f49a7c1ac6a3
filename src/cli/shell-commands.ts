import { Argument, type Command, CommanderError, Option } from 'commander';
import { ExtractError } from '../errors.ts';
import { addFlags } from '../flags/commander.ts';
import { parseFlags } from '../flags/parse.ts';
import { VERSION_FLAGS } from '../flags/tables.ts';
import { mistypedCommand } from './run-command.ts';
import { TOPIC_NAMES, TOPICS } from './topics.ts';

/**
 * The commands a shell user expects of any CLI: `extract help [topic|command]`,
 * `extract version [--json]` and `extract completion bash|zsh|fish`, and --version on every
 * command. Help and topics are plain text of the start-up bundle; version and completion load
 * their action (shell-action.ts) only when run.
 */
export function registerShell(program: Command, version: { version: string; line: string }): void {
  const versionLine = version.line;
  program
    .command('help')
    .description(`show help for a command, or a topic: ${TOPIC_NAMES.join(', ')}`)
    .argument('[topic...]', `a command (serve, config set...) or a topic (${TOPIC_NAMES.join(', ')})`)
    .action((words: string[]) => {
      process.stdout.write(helpText(program, words));
    });
  const versionCommand = program
    .command('version')
    .description('print the version, the Node.js runtime and the platform, and the service configured');
  addFlags(versionCommand, VERSION_FLAGS).action(async (raw: Record<string, unknown>) => {
    const flags = parseFlags(VERSION_FLAGS, raw);
    const { versionReport } = await import('./shell-action.ts');
    process.stdout.write(await versionReport(version.version, flags.json, process.env));
  });
  program
    .command('completion')
    .description('print a completion script for bash, zsh or fish (source it from your shell profile)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      `
Examples:
  source <(extract completion bash)                          # bash, in ~/.bashrc
  source <(extract completion zsh)                           # zsh, in ~/.zshrc
  extract completion fish > ~/.config/fish/completions/extract.fish

It offers commands, flags, a flag's choices, and files after a flag whose value is a path or
for path arguments; after a flag whose value is a number, a duration or a key it offers nothing.
`,
    )
    .action(async (shell: 'bash' | 'zsh' | 'fish') => {
      const { completionScript } = await import('./shell-action.ts');
      process.stdout.write(completionScript(program, shell));
    });
  // --version on every command (a subcommand's flags would refuse it otherwise), with the runtime.
  const everywhere = (command: Command): void => {
    for (const sub of command.commands) {
      if (sub.options.every((o) => o.long !== '--version')) {
        sub.addOption(new Option('-V, --version', 'print the version, runtime and platform'));
        sub.on('option:version', () => {
          process.stdout.write(`${versionLine}\n`);
          // As commander's own --version ends: main.ts turns this into exit 0.
          throw new CommanderError(0, 'commander.version', versionLine);
        });
      }
      everywhere(sub);
    }
  };
  everywhere(program);
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
