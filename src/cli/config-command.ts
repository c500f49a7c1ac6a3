import type { Command } from 'commander';
import type { ConfigDeps } from '../config/commands.ts';
import { ENV_API_KEY, ENV_BASE_URL, ENV_CONFIG_DIR, ENV_STATE_URL } from '../config/env-names.ts';

/** `extract config set|get|unset|list|path`: the actions only forward to src/config/commands.ts. */
export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description(
      'Read and write the user config store (api_key, base_url, state_url, missing_marker); the file is readable by its owner only',
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
  config
    .command('set <key> [value]')
    .description(
      'store a value; with no value (or "-") it is read from standard input, or asked for unseen on a terminal',
    )
    .action(async (key: string, value: string | undefined) =>
      (await _commands()).configSet({ key, value }, await _defaultDeps()),
    );
  config
    .command('get <key>')
    .description('print a value (the API key as ext_…last4); exit 1 when not set')
    .action(async (key: string) => {
      if (!(await _commands()).configGet({ key }, await _defaultDeps())) process.exitCode = 1;
    });
  config
    .command('unset <key>')
    .description('remove a value')
    .action(async (key: string) => (await _commands()).configUnset({ key }, await _defaultDeps()));
  config
    .command('list')
    .description('print every stored value as key=value (the API key masked)')
    .action(async () => (await _commands()).configList(await _defaultDeps()));
  config
    .command('path')
    .description('print the path of the config file')
    .action(async () => (await _commands()).configPath(await _defaultDeps()));
}

function _commands() {
  return import('../config/commands.ts');
}

// conf is loaded only when a config command runs, so `extract --version` stays fast.
async function _defaultDeps(): Promise<ConfigDeps> {
  const { openConfigStore } = await import('../config/store.ts');
  return {
    store: openConfigStore({ env: process.env }),
    env: process.env,
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
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
