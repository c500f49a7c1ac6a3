import { describe, expect, it } from 'vitest';
import { ExtractError } from '../../src/errors.ts';
import {
  type ConfigKey,
  keyFingerprint,
  maskKey,
  normaliseBaseUrl,
  requireSettings,
  resolveMissingMarker,
  resolveSettings,
} from '../../src/config/settings.ts';
import { KEY } from './helpers.ts';

function store(values: Partial<Record<ConfigKey, string>>) {
  return { get: (key: ConfigKey) => values[key] };
}

const STORED = store({ api_key: 'ext_stored_000000000000', base_url: 'https://stored.example' });
const ENV = { EXTRACT_API_KEY: 'ext_env_0000000000000', EXTRACT_BASE_URL: 'https://env.example' };

describe('settings', () => {
  it('config: the missing marker is "-" unless --no-missing-marker, --missing-marker or the store says; "" in the store is none', () => {
    expect(resolveMissingMarker({}, store({}))).toBe('-');
    expect(resolveMissingMarker({}, store({ missing_marker: 'n/a' }))).toBe('n/a');
    expect(resolveMissingMarker({}, store({ missing_marker: '' }))).toBeNull();
    expect(resolveMissingMarker({ missingMarker: '?' }, store({ missing_marker: 'n/a' }))).toBe('?');
    expect(resolveMissingMarker({ noMissingMarker: true }, store({ missing_marker: 'n/a' }))).toBeNull();
    expect(() => resolveMissingMarker({ missingMarker: '' }, store({}))).toThrow(/use --no-missing-marker/);
  });

  it('config: flags win over the environment, which wins over the store', () => {
    const flags = { apiKey: 'ext_flag_00000000000', baseUrl: 'https://flag.example/' };
    expect(resolveSettings({ flags, env: ENV, store: STORED })).toEqual({
      apiKey: 'ext_flag_00000000000',
      baseUrl: 'https://flag.example',
      sources: { apiKey: 'flag', baseUrl: 'flag' },
    });
    expect(resolveSettings({ flags: {}, env: ENV, store: STORED })).toMatchObject({
      apiKey: ENV.EXTRACT_API_KEY,
      baseUrl: 'https://env.example',
      sources: { apiKey: 'env', baseUrl: 'env' },
    });
    expect(resolveSettings({ flags: {}, env: {}, store: STORED })).toMatchObject({
      apiKey: 'ext_stored_000000000000',
      sources: { apiKey: 'config', baseUrl: 'config' },
    });
  });

  it('config: each setting is resolved on its own, and an empty variable counts as unset', () => {
    const s = resolveSettings({
      flags: { baseUrl: 'http://127.0.0.1:4010' },
      env: { EXTRACT_API_KEY: '' },
      store: STORED,
    });
    expect(s).toMatchObject({
      apiKey: 'ext_stored_000000000000',
      baseUrl: 'http://127.0.0.1:4010',
      sources: { apiKey: 'config', baseUrl: 'flag' },
    });
    expect(resolveSettings({ flags: {}, env: {}, store: store({}) })).toMatchObject({
      apiKey: undefined,
      baseUrl: undefined,
    });
  });

  it('config: a key not starting with ext_ is refused, naming where it came from, without echoing it', () => {
    for (const [input, where] of [
      [{ flags: { apiKey: 'sk_secret_123' }, env: {}, store: store({}) }, '--api-key'],
      [{ flags: {}, env: { EXTRACT_API_KEY: 'sk_secret_123' }, store: store({}) }, 'EXTRACT_API_KEY'],
      [{ flags: {}, env: {}, store: store({ api_key: 'sk_secret_123' }) }, 'the config store'],
    ] as const) {
      let error: unknown;
      try {
        resolveSettings(input);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ExtractError);
      if (!(error instanceof ExtractError)) continue;
      expect(error.code).toBe('usage');
      expect(error.message).toContain(`from ${where}`);
      expect(error.message).toContain('does not start with "ext_"');
      expect(error.message).not.toContain('sk_secret_123');
    }
  });

  it('config: a base URL must be http(s), and loses its trailing slash', () => {
    expect(normaliseBaseUrl('https://x.example/api/', 'test')).toBe('https://x.example/api');
    expect(() => normaliseBaseUrl('ftp://x', 'test')).toThrow(/https:\/\//);
    expect(() => normaliseBaseUrl('not a url', 'test')).toThrow(/not a URL/);
    expect(() => normaliseBaseUrl('https://u:p@x.example', 'test')).toThrow(/user name or password/);
  });

  it('config: requireSettings says the three ways to give a missing setting', () => {
    const none = resolveSettings({ flags: {}, env: {}, store: store({}) });
    expect(() => requireSettings(none)).toThrow(
      /--api-key, set EXTRACT_API_KEY, or run "extract config set api_key -"/,
    );
    const keyOnly = resolveSettings({ flags: { apiKey: KEY }, env: {}, store: store({}) });
    expect(() => requireSettings(keyOnly)).toThrow(/--base-url, set EXTRACT_BASE_URL/);
    expect(requireSettings(resolveSettings({ flags: {}, env: ENV, store: store({}) }))).toEqual({
      apiKey: ENV.EXTRACT_API_KEY,
      baseUrl: 'https://env.example',
    });
  });

  it('config: the key fingerprint is 16 hex digits, one-way, and changes with the key or the service', () => {
    const fp = keyFingerprint(KEY, 'https://x.example');
    expect(fp).toMatch(/^[0-9a-f]{16}$/);
    expect(fp).not.toContain(KEY.slice(4, 12));
    expect(keyFingerprint(KEY, 'https://x.example/')).toBe(fp);
    expect(keyFingerprint(`${KEY}0`, 'https://x.example')).not.toBe(fp);
    expect(keyFingerprint(KEY, 'https://y.example')).not.toBe(fp);
  });

  it('config: a masked key shows only the prefix and the last four characters', () => {
    expect(maskKey(KEY)).toBe('ext_…a1b2');
    expect(maskKey('ext_short')).toBe('ext_…');
  });
});

describe('settings: the shared journal', () => {
  it('EXTRACT_STATE_URL wins over the store; a URL that is not postgres:// is refused without its password', async () => {
    const { resolveStateUrl } = await import('../../src/config/settings.ts');
    const stored = store({ state_url: 'postgres://u:stored_pw@db/stored' });
    expect(resolveStateUrl({ EXTRACT_STATE_URL: 'postgresql://u:env_pw@db/env' }, stored)).toBe(
      'postgresql://u:env_pw@db/env',
    );
    expect(resolveStateUrl({}, stored)).toBe('postgres://u:stored_pw@db/stored');
    expect(resolveStateUrl({ EXTRACT_STATE_URL: '' }, store({}))).toBeUndefined();
    const err = (() => {
      try {
        resolveStateUrl({ EXTRACT_STATE_URL: 'mysql://u:secret_pw@db/x' }, store({}));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ExtractError);
    expect((err as ExtractError).message).toMatch(
      /the state URL from EXTRACT_STATE_URL \(mysql:\/\/\*\*\*@db\/x\) is not a postgres:\/\/ URL/,
    );
    expect((err as ExtractError).message).not.toContain('secret_pw');
  });
});
