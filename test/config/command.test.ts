import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { configGet, configList, configPath, configSet, configUnset } from '../../src/config/commands.ts';
import { registerCommands } from '../../src/cli/commands.ts';
import { KEY, captureDeps, useConfigDirs } from './helpers.ts';

const configDir = useConfigDirs();

describe('extract config', () => {
  it('config: set stores a key, and says so with the key masked', async () => {
    const deps = captureDeps(await configDir());
    await configSet({ key: 'api_key', value: KEY }, deps);
    expect(deps.store.get('api_key')).toBe(KEY);
    expect(deps.err.join('\n')).toContain('api_key set to ext_…a1b2');
    expect([...deps.out, ...deps.err].join('\n')).not.toContain(KEY);
  });

  it('config: a key not starting with ext_ is refused with a clear message, and not stored', async () => {
    const deps = captureDeps(await configDir());
    await expect(configSet({ key: 'api_key', value: 'sk_live_abc' }, deps)).rejects.toThrow(
      /does not start with "ext_"/,
    );
    expect(deps.store.get('api_key')).toBeUndefined();
  });

  it('config: an unknown key or a bad base URL is refused', async () => {
    const deps = captureDeps(await configDir());
    await expect(configSet({ key: 'apikey', value: KEY }, deps)).rejects.toThrow(
      /unknown config key "apikey": the keys are api_key, base_url, state_url, missing_marker and password_file/,
    );
    await expect(configSet({ key: 'base_url', value: 'extract.example' }, deps)).rejects.toThrow(/not a URL/);
  });

  it('config: password_file stores an absolute path (a run may start in any folder); a relative one is refused', async () => {
    const deps = captureDeps(await configDir());
    await expect(configSet({ key: 'password_file', value: 'pw.txt' }, deps)).rejects.toThrow(
      /not an absolute path: give its full path/,
    );
    expect(deps.store.get('password_file')).toBeUndefined();
    await configSet({ key: 'password_file', value: '/home/me/.config/extract/pdf-passwords' }, deps);
    expect(deps.store.get('password_file')).toBe('/home/me/.config/extract/pdf-passwords');
  });

  it('config: set KEY - reads the value from standard input', async () => {
    const deps = captureDeps(await configDir(), { stdin: `${KEY}\n` });
    await configSet({ key: 'api_key', value: '-' }, deps);
    expect(deps.store.get('api_key')).toBe(KEY);
  });

  it('config: get prints the base URL, and the key only as ext_…last4', async () => {
    const deps = captureDeps(await configDir());
    await configSet({ key: 'api_key', value: KEY }, deps);
    await configSet({ key: 'base_url', value: 'https://x.example/' }, deps);
    expect(configGet({ key: 'api_key' }, deps).value).toBe('ext_…a1b2');
    expect(configGet({ key: 'base_url' }, deps).value).toBe('https://x.example');
    expect(deps.out).toEqual(['ext_…a1b2', 'https://x.example']);
  });

  it('config: get of an unset key prints nothing on stdout and reports not found', async () => {
    const deps = captureDeps(await configDir());
    expect(configGet({ key: 'base_url' }, deps).value).toBeNull();
    expect(deps.out).toEqual([]);
    expect(deps.err[0]).toMatch(/base_url is not set/);
  });

  it('config: the key never appears in list output', async () => {
    const deps = captureDeps(await configDir(), { env: { EXTRACT_API_KEY: 'ext_other_000000000000' } });
    await configSet({ key: 'api_key', value: KEY }, deps);
    await configSet({ key: 'base_url', value: 'https://x.example' }, deps);
    deps.out.length = 0;
    configList(deps);
    expect(deps.out).toEqual(['api_key=ext_…a1b2', 'base_url=https://x.example']);
    const everything = [...deps.out, ...deps.err].join('\n');
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain('ext_other_000000000000');
    expect(deps.err).toContain('note: EXTRACT_API_KEY is set and takes precedence over the stored api_key');
  });

  it('config: unset removes a value, and path prints the file', async () => {
    const deps = captureDeps(await configDir());
    await configSet({ key: 'base_url', value: 'https://x.example' }, deps);
    configUnset({ key: 'base_url' }, deps);
    expect(deps.store.get('base_url')).toBeUndefined();
    configPath(deps);
    expect(deps.out.at(-1)).toBe(deps.store.path);
  });
});

describe('extract config through commander', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  async function run(dir: string, ...args: string[]): Promise<{ out: string; err: string }> {
    vi.stubEnv('EXTRACT_CONFIG_DIR', dir);
    vi.stubEnv('EXTRACT_API_KEY', '');
    let out = '';
    let err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      err += String(chunk);
      return true;
    });
    const program = new Command('extract').exitOverride();
    registerCommands(program, { version: '0.0.0', line: 'extract 0.0.0' });
    await program.parseAsync(['node', 'extract', 'config', ...args]);
    vi.restoreAllMocks();
    return { out, err };
  }

  it('config: the commands work end to end on a store in EXTRACT_CONFIG_DIR', async () => {
    const dir = await configDir();
    await run(dir, 'set', 'api_key', KEY);
    await run(dir, 'set', 'base_url', 'https://x.example');
    const listed = await run(dir, 'list');
    expect(listed.out).toBe('api_key=ext_…a1b2\nbase_url=https://x.example\n');
    expect(listed.out + listed.err).not.toContain(KEY);
    expect((await run(dir, 'path')).out.trim()).toBe(`${dir}/config.json`);
    await run(dir, 'unset', 'api_key');
    await run(dir, 'get', 'api_key');
    expect(process.exitCode).toBe(1);
  });
});
