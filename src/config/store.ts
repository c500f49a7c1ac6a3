import Conf from 'conf';
import { z } from 'zod';
import { ExtractError } from '../errors.ts';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ownFile, ownFolder } from '../private-files.ts';
import { CONFIG_KEYS, type ConfigKey, ENV_CONFIG_DIR, type Env, type SettingsStore } from './settings.ts';
import { configFilePath } from './store-path.ts';

/**
 * The user's config store (conf): one JSON file readable by its owner only (mode 0600),
 * since it holds an API key. It lives in the user's config directory (~/.config/extract on
 * Linux), or in EXTRACT_CONFIG_DIR when that is set.
 */
export type ConfigStore = SettingsStore & {
  readonly path: string;
  set(key: ConfigKey, value: string): void;
  delete(key: ConfigKey): void;
  /** The keys that are set, in CONFIG_KEYS order. */
  entries(): [ConfigKey, string][];
};

export const CONFIG_FILE_MODE = 0o600;

// Hand edits are possible, so the file is checked when read rather than trusted.
const StoredConfig = z
  .object({
    api_key: z.string().optional(),
    base_url: z.string().optional(),
    state_url: z.string().optional(),
    missing_marker: z.string().optional(),
    password_file: z.string().optional(),
  })
  .loose();
type StoredConfig = z.infer<typeof StoredConfig>;

export function openConfigStore(options: { dir?: string | undefined; env?: Env } = {}): ConfigStore {
  const env = options.env ?? process.env;
  // One place decides the file's path (store-path.ts), so a cheap look at it and conf agree.
  const dir = options.dir ?? dirname(configFilePath(env));
  // It holds the API key: a folder of the user's own, a file they made (conf replaces it by a
  // rename, so a planted link is not written through, but it would be read through).
  const todo = `set ${ENV_CONFIG_DIR} to a folder of your own, or delete the file and run "extract config set" again`;
  // Made 0700 when it can be; reading the store must not need a writable home (conf says why on a write).
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // Checked below if it exists; conf reports a folder it cannot make when it writes.
  }
  ownFolder(dir, todo, false);
  ownFile(join(dir, 'config.json'), todo, true);
  const conf = _guard(
    () =>
      new Conf<StoredConfig>({
        projectName: 'extract',
        projectSuffix: '',
        configFileMode: CONFIG_FILE_MODE,
        accessPropertiesByDotNotation: false,
        cwd: dir,
      }),
    dir,
  );
  const read = (): StoredConfig => {
    const parsed = StoredConfig.safeParse(_guard(() => conf.store, conf.path));
    if (!parsed.success) {
      throw new ExtractError(
        'usage',
        `the config file ${conf.path} holds a value that is not text: fix it, or delete it and run "extract config set" again`,
      );
    }
    return parsed.data;
  };
  return {
    path: conf.path,
    get: (key) => read()[key],
    set: (key, value) => _guard(() => conf.set(key, value), conf.path),
    delete: (key) => _guard(() => conf.delete(key), conf.path),
    entries: () => {
      const stored = read();
      return CONFIG_KEYS.flatMap((k): [ConfigKey, string][] => {
        const value = stored[k];
        return value === undefined ? [] : [[k, value]];
      });
    },
  };
}

/**
 * conf throws a SyntaxError naming the file for one that is not JSON, and fs errors for
 * unreadable ones; neither carries the file's contents, so their text is safe to show.
 */
function _guard<T>(fn: () => T, where: string): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ExtractError) throw err;
    const reason = err instanceof Error ? err.message.replace(/\.$/, '') : String(err);
    throw new ExtractError(
      'usage',
      `the config store in ${where} cannot be used (${reason}): fix the file, or delete it and run "extract config set" again`,
      {
        cause: err,
      },
    );
  }
}
