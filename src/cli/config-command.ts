import type { Command } from 'commander';
import type { ConfigDeps } from '../config/commands.ts';
import { ENV_API_KEY, ENV_BASE_URL, ENV_CONFIG_DIR, ENV_STATE_URL } from '../config/env-names.ts';
import { addFlags } from '../flags/commander.ts';
import { CONFIG_FLAGS, type ConfigValues } from '../flags/common.ts';
import { parseFlags } from '../flags/parse.ts';
import { verbosityOf } from './verbosity.ts';

/** `extract config set|get|unset|list|path`: the actions only forward to src/config/commands.ts. */
export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description(
      'Read and write the user config store (api_key, base_url, state_url, missing_marker, password_file); the file is readable by its owner only',
    )
    .addHelpText(
      'after',
      `
Keys: api_key (starts with ext_), base_url (https://…), state_url (postgres://…, a journal shared by many workers;
its password is shown as ***).
Precedence: --api-key/--base-url/--state, then ${ENV_API_KEY}/${ENV_BASE_URL}/${ENV_STATE_URL}, then this store.
${ENV_CONFIG_DIR} moves the store to another directory.

Examples:
  extract config set api_key                        (asks for the key, not echoed: kept out of shell history)
  printf %s "$KEY" | extract config set api_key      (reads it from standard input)
  extract config set base_url https://extract.example.com
  extract config list
`,
    );
  const sub = (syntax: string, description: string) =>
    addFlags(config.command(syntax).description(description), CONFIG_FLAGS);
  sub(
    'set <key> [value]',
    'store a value; with no value (or "-") it is read from standard input, or asked for unseen on a terminal',
  ).action(async (key: string, value: string | undefined, raw: Record<string, unknown>) => {
    const flags = parseFlags(CONFIG_FLAGS, raw);
    _print(await (await _commands()).configSet({ key, value }, await _defaultDeps(flags)), flags);
  });
  sub('get <key>', 'print a value (the API key as ext_…last4); exit 1 when not set').action(
    async (key: string, raw: Record<string, unknown>) => {
      const flags = parseFlags(CONFIG_FLAGS, raw);
      const got = (await _commands()).configGet({ key }, await _defaultDeps(flags));
      _print(got, flags);
      if (got.value === null) process.exitCode = 1;
    },
  );
  sub('unset <key>', 'remove a value').action(async (key: string, raw: Record<string, unknown>) => {
    const flags = parseFlags(CONFIG_FLAGS, raw);
    _print((await _commands()).configUnset({ key }, await _defaultDeps(flags)), flags);
  });
  sub('list', 'print every stored value as key=value (the API key masked)').action(
    async (raw: Record<string, unknown>) => {
      const flags = parseFlags(CONFIG_FLAGS, raw);
      _print((await _commands()).configList(await _defaultDeps(flags)), flags);
    },
  );
  sub('path', 'print the path of the config file').action(async (raw: Record<string, unknown>) => {
    const flags = parseFlags(CONFIG_FLAGS, raw);
    _print((await _commands()).configPath(await _defaultDeps(flags)), flags);
  });
}

/** --json: what the command returned, as one object on stdout (its text went nowhere). */
function _print(data: object, flags: ConfigValues): void {
  if (flags.json) process.stdout.write(`${JSON.stringify(data)}\n`);
}

function _commands() {
  return import('../config/commands.ts');
}

// conf is loaded only when a config command runs, so `extract --version` stays fast.
async function _defaultDeps(flags: ConfigValues): Promise<ConfigDeps> {
  const { openConfigStore } = await import('../config/store.ts');
  // -q keeps only warnings (a secret now in the shell's history); -v has nothing more to say here.
  const quiet = verbosityOf(flags) === 'quiet';
  return {
    store: openConfigStore({ env: process.env }),
    env: process.env,
    // --json: stdout holds the one object _print writes.
    stdout: (line) => (flags.json ? undefined : process.stdout.write(`${line}\n`)),
    stderr: (line) => (quiet && !line.startsWith('warning:') ? undefined : process.stderr.write(`${line}\n`)),
    readStdin: async () => {
      if (process.stdin.isTTY)
        return (await import('./hidden-prompt.ts')).hiddenPrompt('paste the value and press Enter: ');
      // The first line only: a piped value needs no newline, a pasted one ends with Enter.
      const { createInterface } = await import('node:readline');
      const lines = createInterface({ input: process.stdin, terminal: false });
      for await (const line of lines) {
        lines.close();
        return line;
      }
      return '';
    },
  };
}
