import { EventEmitter } from 'node:events';
import { chmodSync, chownSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { listen } from '../../src/cli/listen-action.ts';
import { LISTEN_FLAGS } from '../../src/flags/servers.ts';
import { parseFlags } from '../../src/flags/parse.ts';
import { Inbox, INBOX_FILE } from '../../src/receiver/inbox.ts';
import { ensureToken, TOKEN_FILE } from '../../src/receiver/token.ts';
import { tempDir } from '../helpers/cli.ts';

const asRoot = process.getuid?.() === 0;
if (!asRoot)
  console.log('private files: not root, so no file can be given to another user; the mode-based variants run instead');

const FORGED = 'the-other-users-token';

/**
 * A data directory others can write into (mode 0777, as a shared folder is), with what another
 * user left in it. Runs the real listen on port 0: either it refuses to start, or it starts and
 * the forged event is posted with the other user's token. Returns what happened.
 */
async function listenIn(dataDir: string): Promise<{ refused?: string; forgedStatus?: number }> {
  const signals = new EventEmitter();
  let stderr = '';
  let started: (url: string) => void = () => {};
  const listening = new Promise<string>((resolve) => {
    started = resolve;
  });
  const running = listen(parseFlags(LISTEN_FLAGS, { port: '0', dataDir }), {
    stdout: new Writable({ write: (_c, _e, done) => done() }),
    stderr: {
      write: (text: string) => {
        stderr += text;
        const url = /Listening on (\S+)/.exec(stderr)?.[1];
        if (url !== undefined) started(url);
        return true;
      },
    },
    signals,
    env: {},
    cwd: dataDir,
  });
  const first = await Promise.race([
    running.then(() => ({ url: undefined })),
    listening.then((url) => ({ url })),
  ]).catch((err: Error) => ({ refused: err.message }));
  if ('refused' in first) return { refused: first.refused };
  const response = await fetch(first.url!, {
    method: 'POST',
    headers: { authorization: `Bearer ${FORGED}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event: 'document.processed', document_id: 'forged', data: {} }),
  });
  signals.emit('SIGTERM');
  await running;
  return { forgedStatus: response.status };
}

function sharedDataDir(): string {
  const dir = join(tempDir(), 'shared-inbox');
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  return dir;
}

describe('listen: its token file is its own', () => {
  it('listen: a listen-token planted as a link in a shared data directory is refused, and no forged event is taken', async () => {
    const dir = sharedDataDir();
    const theirs = join(tempDir(), 'their-token');
    writeFileSync(theirs, `${FORGED}\n`, { mode: 0o600 });
    symlinkSync(theirs, join(dir, TOKEN_FILE));
    const outcome = await listenIn(dir);
    expect(outcome.forgedStatus).toBeUndefined();
    expect(outcome.refused).toMatch(/listen-token is a link.*delete it to have a new token made/);
    // The folder is closed to others from now on.
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it.skipIf(!asRoot)('listen: a listen-token another user made (chowned) is refused', async () => {
    const dir = sharedDataDir();
    const planted = join(dir, TOKEN_FILE);
    writeFileSync(planted, `${FORGED}\n`, { mode: 0o600 });
    chownSync(planted, 65534, 65534);
    const outcome = await listenIn(dir);
    expect(outcome.forgedStatus).toBeUndefined();
    expect(outcome.refused).toMatch(/belongs to another user \(uid 65534\).*delete it to have a new token made/);
  });

  it('listen: a listen-token others may read or write is refused (always runs: modes, not owners)', () => {
    const dir = sharedDataDir();
    writeFileSync(join(dir, TOKEN_FILE), `${FORGED}\n`);
    chmodSync(join(dir, TOKEN_FILE), 0o666);
    expect(() => ensureToken(dir)).toThrow(/is open to other users \(mode 666\).*delete it to have a new token made/);
  });

  it.skipIf(!asRoot)('listen: a data directory of another user is refused', () => {
    const dir = sharedDataDir();
    chownSync(dir, 65534, 65534);
    expect(() => ensureToken(dir)).toThrow(/belongs to another user.*--data-dir of your own/);
  });
});

describe('listen: inbox.db is private', () => {
  it('listen: inbox.db and its -wal are 0600, and a link planted as inbox.db is refused', () => {
    const dir = sharedDataDir();
    Inbox.open(dir).close();
    for (const name of [INBOX_FILE, `${INBOX_FILE}-wal`]) {
      const st = statSync(join(dir, name), { throwIfNoEntry: false });
      if (st !== undefined) expect(`${name} ${(st.mode & 0o777).toString(8)}`).toBe(`${name} 600`);
    }
    const other = sharedDataDir();
    symlinkSync(join(tempDir(), 'elsewhere.db'), join(other, INBOX_FILE));
    expect(() => Inbox.open(other)).toThrow(/inbox\.db is a link/);
  });

  it('listen: an inbox.db made 0644 by an earlier version is closed to others', () => {
    const dir = join(tempDir(), 'old-inbox');
    mkdirSync(dir);
    Inbox.open(dir).close();
    chmodSync(join(dir, INBOX_FILE), 0o644);
    Inbox.open(dir).close();
    expect(statSync(join(dir, INBOX_FILE)).mode & 0o777).toBe(0o600);
  });
});
