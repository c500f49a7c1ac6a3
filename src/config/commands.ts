import {
  type ConfigKey,
  ENV_API_KEY,
  ENV_BASE_URL,
  ENV_STATE_URL,
  type Env,
  maskKey,
  parseConfigKey,
  validateConfigValue,
} from './settings.ts';
import type { ConfigStore } from './store.ts';
import { redactUrl } from '../redact.ts';
import type { ConfigList, ConfigValue } from '../outputs/json-shapes.ts';

/**
 * `extract config set|get|unset|list|path`: the user's config store. Each returns what it did
 * as data (what --json prints) and says it as text: values a script reads to stdout,
 * confirmations and notes to stderr. The API key is never printed whole, only as ext_…last4.
 */
export type ConfigDeps = {
  store: ConfigStore;
  env: Env;
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** The value of `set KEY` or `set KEY -` (hidden on a terminal), so a secret stays out of the shell's history. */
  readStdin: () => Promise<string>;
};

/** The variable that overrides a stored key; missing_marker has none (a flag does). */
const ENV_OF: Partial<Record<ConfigKey, string>> = {
  api_key: ENV_API_KEY,
  base_url: ENV_BASE_URL,
  state_url: ENV_STATE_URL,
};

/**
 * `set KEY VALUE`, or `set KEY` / `set KEY -`: the value from standard input (a hidden prompt on
 * a terminal), which keeps a secret out of the shell's history. A secret given on the command
 * line is stored, with a warning that it is now in that history.
 */
export async function configSet(
  args: { key: string; value?: string | undefined },
  deps: ConfigDeps,
): Promise<ConfigValue> {
  const key = parseConfigKey(args.key);
  const fromStdin = args.value === undefined || args.value === '-';
  const raw = fromStdin ? ((await deps.readStdin()).split(/\r?\n/)[0] ?? '') : args.value!;
  const value = validateConfigValue(key, raw, fromStdin ? 'standard input' : `"extract config set ${key}"`);
  deps.store.set(key, value);
  deps.stderr(`${key} set to ${_shown(key, value)} in ${deps.store.path}`);
  if (!fromStdin && (key === 'api_key' || (key === 'state_url' && redactUrl(value) !== value))) {
    const what = key === 'api_key' ? 'the API key' : "the state URL's password";
    deps.stderr(
      `warning: ${what} is now in your shell's history (and was visible in ps while this ran): ` +
        `clear it from the history, and next time run "extract config set ${key}" with no value (it asks for it, or reads standard input)`,
    );
  }
  _noteOverride(key, deps);
  return _valueOf(key, deps);
}

/** Prints the value (the key masked); its `value` is null when the key is not set (exit code 1). */
export function configGet(args: { key: string }, deps: ConfigDeps): ConfigValue {
  const key = parseConfigKey(args.key);
  const got = _valueOf(key, deps);
  if (got.value === null) {
    deps.stderr(`${key} is not set in ${deps.store.path}`);
    return got;
  }
  deps.stdout(got.value);
  _noteOverride(key, deps);
  return got;
}

export function configUnset(args: { key: string }, deps: ConfigDeps): ConfigValue {
  const key = parseConfigKey(args.key);
  const had = deps.store.get(key) !== undefined;
  deps.store.delete(key);
  deps.stderr(had ? `${key} removed from ${deps.store.path}` : `${key} was not set in ${deps.store.path}`);
  return _valueOf(key, deps);
}

export function configList(deps: ConfigDeps): ConfigList {
  const entries = deps.store.entries();
  if (entries.length === 0) deps.stderr(`nothing is set in ${deps.store.path}`);
  const values: Record<string, string> = {};
  for (const [key, value] of entries) {
    values[key] = _shown(key, value);
    deps.stdout(`${key}=${values[key]}`);
    _noteOverride(key, deps);
  }
  return { path: deps.store.path, values };
}

export function configPath(deps: ConfigDeps): { path: string } {
  deps.stdout(deps.store.path);
  return { path: deps.store.path };
}

/** A key as the store holds it now, shown masked, and the variable that overrides it. */
function _valueOf(key: ConfigKey, deps: ConfigDeps): ConfigValue {
  const value = deps.store.get(key);
  const env = ENV_OF[key];
  return {
    key,
    value: value === undefined ? null : _shown(key, value),
    overridden_by: env !== undefined && deps.env[env] ? env : null,
    path: deps.store.path,
  };
}

function _shown(key: ConfigKey, value: string): string {
  if (key === 'state_url') return redactUrl(value);
  return key === 'api_key' ? maskKey(value) : value;
}

function _noteOverride(key: ConfigKey, deps: ConfigDeps): void {
  const env = ENV_OF[key];
  if (env !== undefined && deps.env[env])
    deps.stderr(`note: ${env} is set and takes precedence over the stored ${key}`);
}
