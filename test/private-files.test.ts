import { chmodSync, chownSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openConfigStore } from '../src/config/store.ts';
import { openStore } from '../src/emulator/store.ts';
import { tempDir } from './helpers/cli.ts';

/**
 * The files that hold secrets besides listen's (test/receiver/private-files.test.ts): serve's
 * database (upload and inbound secrets, beside the documents) and the config store (the API
 * key). Made 0600 in a folder closed to others; a link or another user's file is refused.
 */

const asRoot = process.getuid?.() === 0;
if (!asRoot)
  console.log(
    'private files: not root, so no file can be given to another user; the link and mode variants run instead',
  );

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);

function shared(): string {
  const dir = join(tempDir(), 'shared');
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  return dir;
}

describe('serve: emulator.db is private', () => {
  it('serve: emulator.db, its -wal and the data directory are closed to others', () => {
    const dir = shared();
    const store = openStore({ dataDir: dir });
    store.db.exec("INSERT INTO meta (key, value) VALUES ('probe', 'x') ON CONFLICT DO NOTHING");
    expect([mode(dir), mode(join(dir, 'emulator.db')), mode(join(dir, 'emulator.db-wal'))]).toEqual([
      '700',
      '600',
      '600',
    ]);
    store.close();
  });

  it('serve: an emulator.db planted as a link is refused, and one made 0644 by an earlier version is closed', () => {
    const dir = shared();
    symlinkSync(join(tempDir(), 'theirs.db'), join(dir, 'emulator.db'));
    expect(() => openStore({ dataDir: dir })).toThrow(/emulator\.db is a link.*pass another --data-dir/);

    const old = join(tempDir(), 'old');
    openStore({ dataDir: old }).close();
    chmodSync(join(old, 'emulator.db'), 0o644);
    openStore({ dataDir: old }).close();
    expect(mode(join(old, 'emulator.db'))).toBe('600');
  });

  it.skipIf(!asRoot)('serve: an emulator.db of another user is refused', () => {
    const dir = join(tempDir(), 'data');
    openStore({ dataDir: dir }).close();
    chownSync(join(dir, 'emulator.db'), 65534, 65534);
    expect(() => openStore({ dataDir: dir })).toThrow(/belongs to another user \(uid 65534\)/);
  });
});

describe('config: the store is private', () => {
  it('config: a config.json planted as a link is never read, and the folder is closed to others', () => {
    const dir = shared();
    const theirs = join(tempDir(), 'theirs.json');
    writeFileSync(theirs, JSON.stringify({ base_url: 'https://attacker.example' }), { mode: 0o600 });
    symlinkSync(theirs, join(dir, 'config.json'));
    expect(() => openConfigStore({ dir }).get('base_url')).toThrow(/config\.json is a link.*EXTRACT_CONFIG_DIR/);
    expect(mode(dir)).toBe('700');
  });

  it.skipIf(!asRoot)('config: a config.json of another user is refused', () => {
    const dir = join(tempDir(), 'config');
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ base_url: 'https://attacker.example' }), { mode: 0o600 });
    chownSync(join(dir, 'config.json'), 65534, 65534);
    expect(() => openConfigStore({ dir }).get('base_url')).toThrow(/belongs to another user \(uid 65534\)/);
  });
});
