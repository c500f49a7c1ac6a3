import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KeySource } from '../batch/session.ts';
import {
  ENV_API_KEY,
  ENV_BASE_URL,
  ENV_STATE_URL,
  type Env,
  requireSettings,
  resolveSettings,
  resolveStateUrl,
} from '../config/settings.ts';
import { NO_STORE } from './stored-settings.ts';

/** Where a command sends its requests: the configured service, or an in-process emulator (--local). */
export type ServiceTarget = {
  baseUrl: string;
  apiKey: string | undefined;
  local: boolean;
  /** Where the API key came from, for the hint when the service rejects it. */
  keySource?: KeySource | undefined;
  /** The journal from EXTRACT_STATE_URL or the config store's state_url, when asked for (`lookUpState`). */
  stateUrl?: string | undefined;
};

/**
 * Resolves flags, environment and config store into a target, runs `work` against it, and
 * stops the --local emulator afterwards whatever happened. Heavy modules load only here.
 */
export async function withTarget<T>(
  flags: { apiKey?: string | undefined; baseUrl?: string | undefined; local?: boolean | undefined },
  env: Env,
  options: { needKey: boolean; lookUpState?: boolean },
  work: (target: ServiceTarget) => Promise<T>,
): Promise<T> {
  if (flags.local === true) {
    // The default configuration of `extract serve`, data in a temporary directory.
    (await import('../engine-package.ts')).requireEngine('--local');
    const { startServer } = await import('../emulator/server.ts');
    const dataDir = await mkdtemp(join(tmpdir(), 'extract-local-'));
    const server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log: () => {} });
    try {
      return await work({ baseUrl: server.url, apiKey: server.apiKeys[0], local: true, keySource: 'local' });
    } finally {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  // The config store (conf, with ajv and semver behind it) loads only when flags and
  // environment leave something to look up: cron jobs and CI steps usually set all of them.
  // A shared journal's URL in the store is looked for only when the store's file mentions one.
  const stateToFind =
    options.lookUpState === true &&
    !env[ENV_STATE_URL] &&
    (await import('../config/store-path.ts')).storeMayHold(env, 'state_url');
  const complete =
    (flags.apiKey ?? env[ENV_API_KEY]) !== undefined &&
    (flags.baseUrl ?? env[ENV_BASE_URL]) !== undefined &&
    !stateToFind;
  const store = complete ? NO_STORE : (await import('../config/store.ts')).openConfigStore({ env });
  const settings = resolveSettings({ flags, env, store });
  const stateUrl = options.lookUpState === true ? resolveStateUrl(env, store) : undefined;
  if (!options.needKey) {
    // A dry run sends nothing; without a configured service it plans every file as new.
    return work({
      baseUrl: settings.baseUrl ?? 'http://unconfigured.invalid',
      apiKey: settings.apiKey,
      local: false,
      stateUrl,
      keySource: settings.sources.apiKey,
    });
  }
  const { apiKey, baseUrl } = requireSettings(settings);
  return work({ baseUrl, apiKey, local: false, stateUrl, keySource: settings.sources.apiKey });
}
