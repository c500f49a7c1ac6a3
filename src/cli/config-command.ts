import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import {
  type ConfigKey,
  ENV_API_KEY,
  ENV_BASE_URL,
  ENV_CONFIG_DIR,
  ENV_STATE_URL,
  type Env,
  maskKey,
  parseConfigKey,
  validateConfigValue,
} from '../config/settings.ts';
import type { ConfigStore } from '../config/store.ts';
import { redactUrl } from '../redact.ts';

/**
 * `extract config set|get|unset|list|path`: the user's config store. Values a script
 * reads go to stdout; confirmations and notes go to stderr. The API key is never printed
 * whole, only as ext_…last4.
 */
export type ConfigDeps = {
  store: ConfigStore;
  env: Env;
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** The value of `set KEY -`, so the key stays out of the shell's history. */
  readStdin: () => Promise<string>;
};

const ENV_OF: Record<ConfigKey, string> = { api_key: ENV_API_KEY, base_url: ENV_BASE_URL, state_url: ENV_STATE_URL };

export async function configSet(args: { key: string; value: string }, deps: ConfigDeps): Promise<void> {
  const key = parseConfigKey(args.key);
  const fromStdin = args.value === '-';
  const raw = fromStdin ? ((await deps.readStdin()).split(/\r?\n/)[0] ?? '') : args.value;
  const value = validateConfigValue(key, raw, fromStdin ? 'standard input' : `"extract config set ${key}"`);
  deps.store.set(key, value);
  deps.stderr(`${key} set to ${_shown(key, value)} in ${deps.store.path}`);
  _noteOverride(key, deps);
}

/** Prints the value (the key masked). Returns false when the key is not set, for exit code 1. */
export function configGet(args: { key: string }, deps: ConfigDeps): boolean {
  const key = parseConfigKey(args.key);
  const value = deps.store.get(key);
  if (value === undefined) {
    deps.stderr(`${key} is not set in ${deps.store.path}`);
    return false;
  }
  deps.stdout(_shown(key, value));
  _noteOverride(key, deps);
  return true;
}

export function configUnset(args: { key: string }, deps: ConfigDeps): void {
  const key = parseConfigKey(args.key);
  const had = deps.store.get(key) !== undefined;
  deps.store.delete(key);
  deps.stderr(had ? `${key} removed from ${deps.store.path}` : `${key} was not set in ${deps.store.path}`);
}

export function configList(deps: ConfigDeps): void {
  const entries = deps.store.entries();
  if (entries.length === 0) deps.stderr(`nothing is set in ${deps.store.path}`);
  for (const [key, value] of entries) {
    deps.stdout(`${key}=${_shown(key, value)}`);
    _noteOverride(key, deps);
  }
}

export function configPath(deps: ConfigDeps): void {
  deps.stdout(deps.store.path);
}

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description(
      'Read and write the user config store (api_key, base_url, state_url); the file is readable by its owner only',
    )
    .addHelpText(
      'after',
      `
Keys: api_key (starts with ext_), base_url (https://…), state_url (postgres://…, a journal shared by many workers;
its password is shown as ***).
Precedence: --api-key/--base-url/--state, then ${ENV_API_KEY}/${ENV_BASE_URL}/${ENV_STATE_URL}, then this store.
${ENV_CONFIG_DIR} moves the store to another directory.

Examples:
  printf %s "$KEY" | extract config set api_key -   (keeps the key out of shell history)
  extract config set base_url https://extract.example.com
  extract config list
`,
    );
  config
    .command('set <key> <value>')
    .description('store a value; "-" reads it from standard input')
    .action(async (key: string, value: string) => configSet({ key, value }, await _defaultDeps()));
  config
    .command('get <key>')
    .description('print a value (the API key as ext_…last4); exit 1 when not set')
    .action(async (key: string) => {
      if (!configGet({ key }, await _defaultDeps())) process.exitCode = 1;
    });
  config
    .command('unset <key>')
    .description('remove a value')
    .action(async (key: string) => configUnset({ key }, await _defaultDeps()));
  config
    .command('list')
    .description('print every stored value as key=value (the API key masked)')
    .action(async () => configList(await _defaultDeps()));
  config
    .command('path')
    .description('print the path of the config file')
    .action(async () => configPath(await _defaultDeps()));
}

function _shown(key: ConfigKey, value: string): string {
  if (key === 'state_url') return redactUrl(value);
  return key === 'api_key' ? maskKey(value) : value;
}

function _noteOverride(key: ConfigKey, deps: ConfigDeps): void {
  const env = ENV_OF[key];
  if (deps.env[env]) deps.stderr(`note: ${env} is set and takes precedence over the stored ${key}`);
}

// conf is loaded only when a config command runs, so `extract --version` stays fast.
async function _defaultDeps(): Promise<ConfigDeps> {
  const { openConfigStore } = await import('../config/store.ts');
  return {
    store: openConfigStore(),
    env: process.env,
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
    readStdin: async () => {
      // The first line only: a pasted key ends with Enter, with no need for Ctrl-D on a terminal.
      if (process.stdin.isTTY) process.stderr.write('paste the value and press Enter: ');
      const lines = createInterface({ input: process.stdin, terminal: false });
      for await (const line of lines) {
        lines.close();
        return line;
      }
      return '';
    },
  };
}
