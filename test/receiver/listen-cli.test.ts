import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli, tempDir } from '../helpers/cli.ts';
import { payload, send } from './helpers.ts';

const TOKEN = 'e2e-token-not-in-logs';

describe('listen: end to end (built CLI)', () => {
  it('listen: killed with SIGKILL right after acknowledging, restarted, it still outputs the event and the re-sent duplicate is a no-op', async () => {
    const base = tempDir();
    const args = ['listen', '--port', '0', '--data-dir', join(base, 'inbox'), '-o', join(base, 'records.jsonl')];
    // The first run holds processing for a minute, so the kill surely lands between the 200 and the work.
    const first = spawnCli(args, { env: { EXTRACT_LISTEN_TOKEN: TOKEN, EXTRACT_LISTEN_WORKER_DELAY_MS: '60000' } });
    const [, url] = await first.waitFor(/^Listening on (\S+)$/m);
    expect(first.stdout().split('\n')[0]).toBe(`Listening on ${url}`);
    const ack = await send(url!, payload({ document_id: 'doc_kill' }), { authorization: `Bearer ${TOKEN}` });
    expect(ack.status).toBe(200);
    first.child.kill('SIGKILL');
    await first.child;
    expect(first.stderr()).not.toContain('doc_kill parser');
    expect(
      existsSync(join(base, 'records.jsonl')) ? await readFile(join(base, 'records.jsonl'), 'utf8') : '',
    ).not.toContain('doc_kill');

    const second = spawnCli(args, { env: { EXTRACT_LISTEN_TOKEN: TOKEN } });
    const [, url2] = await second.waitFor(/^Listening on (\S+)$/m);
    await second.waitFor(/<-- doc_kill parser=Invoices pages=2 new/);
    const again = await send(url2!, payload({ document_id: 'doc_kill' }), {
      method: 'PUT',
      authorization: `Bearer ${TOKEN}`,
    });
    expect(again.status).toBe(200);
    await second.waitFor(/<-- doc_kill parser=Invoices pages=2 duplicate/);
    const wrong = await send(url2!, payload(), { authorization: 'Bearer wrong-guess' });
    expect(wrong.status).toBe(401);
    await second.waitFor(/<-- 401 POST \/webhook: wrong token/);

    second.child.kill('SIGINT');
    const result = await second.child;
    expect(result.exitCode).toBe(0);
    expect(second.stderr()).toMatch(/received 1 \(1 new, 1 duplicate\), rejected 0, unauthorized 1/);
    const records = (await readFile(join(base, 'records.jsonl'), 'utf8')).trim().split('\n');
    expect(records.map((l) => JSON.parse(l).document_id)).toEqual(['doc_kill']);
    expect(first.stderr() + second.stderr() + second.stdout()).not.toContain(TOKEN);
  });

  it('listen: bad flag combinations exit 2 with a message that says what to do; a non-loopback bind warns', async () => {
    const noToken = spawnCli(['listen', '--auth', 'bearer', '--port', '0', '--data-dir', tempDir()]);
    expect((await noToken.child).exitCode).toBe(2);
    expect(noToken.stderr()).toContain('--auth bearer needs a token: set EXTRACT_LISTEN_TOKEN');

    const open = spawnCli(['listen', '--host', '0.0.0.0', '--port', '0', '--data-dir', tempDir()]);
    await open.waitFor(/warning: bound to 0\.0\.0\.0, not loopback.*--auth none lets them all in/);
    open.child.kill('SIGTERM');
    const stopped = await open.child;
    expect(stopped.exitCode, `${stopped.signal} ${open.stderr()}`).toBe(0);
  });
});
