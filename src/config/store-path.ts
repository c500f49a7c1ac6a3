import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import envPaths from 'env-paths';
import { ENV_CONFIG_DIR, type ConfigKey, type Env } from './settings.ts';

/**
 * Where the config store's file is, computed as conf computes it (env-paths, the project
 * "extract"), without loading conf: reading the file to see whether it mentions a key costs
 * a read, where conf with ajv costs a few hundred milliseconds of start-up.
 */
export function configFilePath(env: Env): string {
  const dir = env[ENV_CONFIG_DIR] || envPaths('extract', { suffix: '' }).config;
  return join(dir, 'config.json');
}

/** False only when the store certainly does not hold `key` (no file, or no such name in it). */
export function storeMayHold(env: Env, key: ConfigKey): boolean {
  try {
    return readFileSync(configFilePath(env), 'utf8').includes(`"${key}"`);
  } catch {
    return false;
  }
}
