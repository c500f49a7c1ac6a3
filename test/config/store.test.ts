import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openConfigStore } from '../../src/config/store.ts';
import { KEY, useConfigDirs } from './helpers.ts';

const configDir = useConfigDirs();

describe('config store', () => {
  it('config: the file is created with mode 0600', async () => {
    const dir = await configDir();
    const store = openConfigStore({ dir });
    store.set('api_key', KEY);
    expect(store.path).toBe(join(dir, 'config.json'));
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
  });

  it('config: a file made readable by others is back to 0600 after the next write', async () => {
    const dir = await configDir();
    const store = openConfigStore({ dir });
    store.set('base_url', 'https://x.example');
    await chmod(store.path, 0o644);
    store.set('api_key', KEY);
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
  });

  it('config: EXTRACT_CONFIG_DIR points the store at another directory', async () => {
    const dir = await configDir();
    const store = openConfigStore({ env: { EXTRACT_CONFIG_DIR: dir } });
    expect(store.path).toBe(join(dir, 'config.json'));
  });

  it('config: values are kept across opens, and removed by delete', async () => {
    const dir = await configDir();
    openConfigStore({ dir }).set('api_key', KEY);
    openConfigStore({ dir }).set('base_url', 'https://x.example');
    const store = openConfigStore({ dir });
    expect(store.entries()).toEqual([
      ['api_key', KEY],
      ['base_url', 'https://x.example'],
    ]);
    store.delete('api_key');
    expect(openConfigStore({ dir }).get('api_key')).toBeUndefined();
    expect(JSON.parse(await readFile(store.path, 'utf8'))).toEqual({ base_url: 'https://x.example' });
  });

  it('config: a broken or hand-mangled file is a usage error that names it', async () => {
    const dir = await configDir();
    await writeFile(join(dir, 'config.json'), '{ not json');
    expect(() => openConfigStore({ dir }).get('api_key')).toThrow(
      /config\.json` is not valid JSON\): fix the file, or delete it/,
    );
    await writeFile(join(dir, 'config.json'), JSON.stringify({ api_key: 42 }));
    expect(() => openConfigStore({ dir }).get('api_key')).toThrow(/not text/);
  });
});

describe('config store: a look without conf', () => {
  it('config: storeMayHold finds state_url where conf keeps it, and says no when the file or the key is absent', async () => {
    const { configFilePath, storeMayHold } = await import('../../src/config/store-path.ts');
    const dir = await configDir();
    const env = { EXTRACT_CONFIG_DIR: dir };
    expect(storeMayHold(env, 'state_url')).toBe(false); // no file yet
    const store = openConfigStore({ env });
    expect(configFilePath(env)).toBe(store.path);
    store.set('api_key', KEY);
    expect(storeMayHold(env, 'state_url')).toBe(false);
    store.set('state_url', 'postgres://u:p@h/db');
    expect(storeMayHold(env, 'state_url')).toBe(true);
  });
});

describe('config store: the missing marker', () => {
  it('config: missing_marker from the store is read when no flag says; "" there is none; a flag wins', async () => {
    const { missingMarkerOf } = await import('../../src/cli/stored-settings.ts');
    const { configSet } = await import('../../src/config/commands.ts');
    const dir = await configDir();
    const env = { EXTRACT_CONFIG_DIR: dir };
    expect(await missingMarkerOf({}, env)).toBe('-'); // no file
    const store = openConfigStore({ env });
    const deps = { store, env, stdout: () => {}, stderr: () => {}, readStdin: async () => '' };
    await configSet({ key: 'missing_marker', value: 'n/a' }, deps);
    expect(await missingMarkerOf({}, env)).toBe('n/a');
    expect(await missingMarkerOf({ missingMarker: '?' }, env)).toBe('?');
    await configSet({ key: 'missing_marker', value: '' }, deps);
    expect(await missingMarkerOf({}, env)).toBeNull();
    expect(await missingMarkerOf({ missingMarker: '-' }, env)).toBe('-');
    expect(await missingMarkerOf({ noMissingMarker: true }, { EXTRACT_CONFIG_DIR: dir })).toBeNull();
  });
});
