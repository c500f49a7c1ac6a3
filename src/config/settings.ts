import { createHash } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { API_KEY_PREFIX, API_KEY_SYNTAX } from '../contract/constants.ts';
import { ExtractError } from '../errors.ts';
import { DEFAULT_MISSING_MARKER, type MissingMarker } from '../outputs/missing-marker.ts';
import { redactUrl } from '../redact.ts';

/**
 * The client's settings (README: "Configuration"): the API key and the base URL, taken
 * from flags, then the environment, then the user's config store. Pure: the store is
 * passed in, so precedence is tested without touching the user's files.
 */

export const CONFIG_KEYS = ['api_key', 'base_url', 'state_url', 'missing_marker', 'password_file'] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

export { ENV_API_KEY, ENV_BASE_URL, ENV_CONFIG_DIR, ENV_STATE_URL } from './env-names.ts';
import { ENV_API_KEY, ENV_BASE_URL, ENV_STATE_URL } from './env-names.ts';

/** The part of the store resolveSettings reads. */
export type SettingsStore = { get(key: ConfigKey): string | undefined };

export type Env = Readonly<Record<string, string | undefined>>;
export type SettingSource = 'flag' | 'env' | 'config';
export type Settings = {
  apiKey: string | undefined;
  baseUrl: string | undefined;
  /** Where each value came from, for -v output and for messages; never the value itself. */
  sources: { apiKey: SettingSource | undefined; baseUrl: SettingSource | undefined };
};

export function parseConfigKey(name: string): ConfigKey {
  const key = CONFIG_KEYS.find((k) => k === name);
  if (key === undefined) {
    throw new ExtractError(
      'usage',
      `unknown config key "${name}": the keys are ${CONFIG_KEYS.slice(0, -1).join(', ')} and ${CONFIG_KEYS.at(-1)}`,
    );
  }
  return key;
}

/** The shared journal's URL when --state is not given: the environment, then the config store. */
export function resolveStateUrl(env: Env, store: SettingsStore): string | undefined {
  const fromEnv = env[ENV_STATE_URL];
  if (fromEnv !== undefined && fromEnv !== '') return checkStateUrl(fromEnv, ENV_STATE_URL);
  const stored = store.get('state_url');
  return stored !== undefined && stored !== ''
    ? checkStateUrl(stored, 'the config store (extract config get state_url)')
    : undefined;
}

/** Refuses a key that cannot be one before any request is made. The value is never echoed. */
export function checkApiKey(value: string, from: string): string {
  const key = value.trim();
  if (!key.startsWith(API_KEY_PREFIX) || key.length === API_KEY_PREFIX.length) {
    throw new ExtractError(
      'usage',
      `the API key from ${from} does not start with "${API_KEY_PREFIX}": API keys of the service look like ${API_KEY_PREFIX}…; copy your parser's key again`,
    );
  }
  // A key is sent as a bearer token: a line break, a space, a quote or a comma there can only be
  // a paste gone wrong (or an attempt to smuggle a header), and undici would refuse some mid-run.
  if (!API_KEY_SYNTAX.test(key)) {
    throw new ExtractError(
      'usage',
      `the API key from ${from} holds a character no key has (after "${API_KEY_PREFIX}" a key is letters, digits and - . _ ~ + /, then = padding): copy your parser's key again, on one line`,
    );
  }
  return key;
}

/** An http(s) URL without trailing slashes, so that `https://x/` and `https://x` are one target. */
export function normaliseBaseUrl(value: string, from: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ExtractError(
      'usage',
      `the base URL from ${from} is not a URL: give one such as https://extract.example.com`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ExtractError(
      'usage',
      `the base URL from ${from} must start with https:// (or http:// for a local emulator)`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new ExtractError(
      'usage',
      `the base URL from ${from} carries a user name or password: remove it; the API key is sent as a bearer token`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

export function validateConfigValue(key: ConfigKey, value: string, from: string): string {
  if (key === 'api_key') return checkApiKey(value, from);
  if (key === 'state_url') return checkStateUrl(value, from);
  // Taken as typed: the marker is compared with values exactly, spaces included; "" is none.
  if (key === 'missing_marker') return value;
  if (key === 'password_file') return checkPasswordFile(value, from);
  return normaliseBaseUrl(value, from);
}

/** The default --password-file: an absolute path, since the store is read from whatever folder a run starts in. */
function checkPasswordFile(value: string, from: string): string {
  if (!isAbsolute(value)) {
    throw new ExtractError(
      'usage',
      `the password file from ${from} is not an absolute path: give its full path (runs read it from any folder)`,
    );
  }
  return value;
}

/**
 * The text read as a missing value: --no-missing-marker (none), --missing-marker, then the config
 * store's missing_marker (an empty one: none), then DEFAULT_MISSING_MARKER.
 */
export function resolveMissingMarker(
  flags: { missingMarker?: string | undefined; noMissingMarker?: boolean | undefined },
  store: SettingsStore,
): MissingMarker {
  if (flags.noMissingMarker === true) return null;
  if (flags.missingMarker !== undefined) {
    if (flags.missingMarker === '')
      throw new ExtractError(
        'usage',
        '--missing-marker "": an empty value is an empty string, not a missing one; to read no value as missing, use --no-missing-marker',
      );
    return flags.missingMarker;
  }
  const stored = store.get('missing_marker');
  if (stored === undefined) return DEFAULT_MISSING_MARKER;
  return stored === '' ? null : stored;
}

/** A postgres:// URL (its password is never echoed: the message shows it redacted). */
function checkStateUrl(value: string, from: string): string {
  const url = value.trim();
  let ok = /^postgres(ql)?:\/\//i.test(url);
  try {
    new URL(url);
  } catch {
    ok = false;
  }
  if (!ok)
    throw new ExtractError(
      'usage',
      `the state URL from ${from} (${redactUrl(url)}) is not a postgres:// URL: write it as postgres://user:password@host:5432/database`,
    );
  return url;
}

/** `ext_…a1b2`: enough to tell two keys apart, never enough to use one. Short keys show no tail. */
export function maskKey(apiKey: string): string {
  const secret = apiKey.startsWith(API_KEY_PREFIX) ? apiKey.slice(API_KEY_PREFIX.length) : apiKey;
  return secret.length >= 12 ? `${API_KEY_PREFIX}…${secret.slice(-4)}` : `${API_KEY_PREFIX}…`;
}

const SOURCE_NAMES = {
  apiKey: { flag: '--api-key', env: ENV_API_KEY, config: 'the config store (extract config get api_key)' },
  baseUrl: { flag: '--base-url', env: ENV_BASE_URL, config: 'the config store (extract config get base_url)' },
} as const;

/** Flags win over the environment, which wins over the config store. Empty values count as unset. */
export function resolveSettings(input: {
  flags: { apiKey?: string | undefined; baseUrl?: string | undefined };
  env: Env;
  store: SettingsStore;
}): Settings {
  const apiKey = _pick(input.flags.apiKey, input.env[ENV_API_KEY], () => input.store.get('api_key'));
  const baseUrl = _pick(input.flags.baseUrl, input.env[ENV_BASE_URL], () => input.store.get('base_url'));
  return {
    apiKey: apiKey && checkApiKey(apiKey.value, SOURCE_NAMES.apiKey[apiKey.source]),
    baseUrl: baseUrl && normaliseBaseUrl(baseUrl.value, SOURCE_NAMES.baseUrl[baseUrl.source]),
    sources: { apiKey: apiKey?.source, baseUrl: baseUrl?.source },
  };
}

/** The settings a request needs, or a usage error that says the three ways to give them. */
export function requireSettings(settings: Settings): { apiKey: string; baseUrl: string } {
  if (settings.apiKey === undefined) {
    throw new ExtractError(
      'usage',
      `no API key: pass --api-key, set ${ENV_API_KEY}, or run "extract config set api_key -" and paste it (or use --local to try the emulator)`,
    );
  }
  if (settings.baseUrl === undefined) {
    throw new ExtractError(
      'usage',
      `no base URL of the service: pass --base-url, set ${ENV_BASE_URL}, or run "extract config set base_url https://…" (or use --local)`,
    );
  }
  return { apiKey: settings.apiKey, baseUrl: settings.baseUrl };
}

/**
 * A one-way fingerprint of (base URL, key): the journal's target id, so a rerun with
 * another parser's key or another service extracts again, and the key is never stored.
 * The newline keeps ("https://a", "bext_…") and ("https://ab", "ext_…") apart.
 */
export function keyFingerprint(apiKey: string, baseUrl: string): string {
  return createHash('sha256')
    .update(`${normaliseBaseUrl(baseUrl, 'the journal')}\n${apiKey}`)
    .digest('hex')
    .slice(0, 16);
}

function _pick(
  flag: string | undefined,
  env: string | undefined,
  stored: () => string | undefined,
): { value: string; source: SettingSource } | undefined {
  if (flag !== undefined && flag !== '') return { value: flag, source: 'flag' };
  if (env !== undefined && env !== '') return { value: env, source: 'env' };
  const value = stored();
  return value !== undefined && value !== '' ? { value, source: 'config' } : undefined;
}
