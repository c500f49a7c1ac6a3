import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { csvChunks } from '../../src/outputs/csv-writer.ts';
import { completedRecord } from '../../src/outputs/record.ts';
import { tempDir } from '../helpers/cli.ts';
import { readCsvObjects } from '../outputs/helpers.ts';
import { payload, send } from './helpers.ts';
import { it } from '../helpers/fixtures.ts';

const TOKEN = 'e2e-token-not-in-logs';

describe('listen: end to end (built CLI)', () => {
  it('listen: killed with SIGKILL right after acknowledging, restarted, it still outputs the event and the re-sent duplicate is a no-op', async ({
    spawnCli,
  }) => {
    const base = tempDir();
    const args = ['listen', '--port', '0', '--data-dir', join(base, 'inbox'), '-o', join(base, 'records.jsonl')];
    // The first run holds processing for a minute, so the kill surely lands between the 200 and the work.
    const first = spawnCli(args, { env: { EXTRACT_LISTEN_TOKEN: TOKEN, EXTRACT_LISTEN_WORKER_DELAY_MS: '60000' } });
    const [, url] = await first.waitFor(/^Listening on (\S+)$/m);
    // On stderr: stdout holds only records (none here: they go to -o).
    expect(first.stderr()).toContain(`Listening on ${url}\n`);
    expect(first.stdout()).toBe('');
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

  it('listen: bad flag combinations exit 2 with a message that says what to do; a non-loopback bind warns', async ({
    spawnCli,
  }) => {
    const noToken = spawnCli(['listen', '--auth', 'bearer', '--port', '0', '--data-dir', tempDir()]);
    expect((await noToken.child).exitCode).toBe(2);
    expect(noToken.stderr()).toContain('--auth bearer needs a token: set EXTRACT_LISTEN_TOKEN');

    const open = spawnCli(['listen', '--auth', 'none', '--host', '0.0.0.0', '--port', '0', '--data-dir', tempDir()]);
    await open.waitFor(/warning: bound to 0\.0\.0\.0, not loopback.*--auth none lets them all in/);
    open.child.kill('SIGTERM');
    const stopped = await open.child;
    expect(stopped.exitCode, `${stopped.signal} ${open.stderr()}`).toBe(0);
  });
  it('listen without credentials: a bearer token made once (0600 in the data dir), printed once, required, kept across restarts; --auth none is explicit', {
    timeout: 120_000,
  }, async ({ spawnCli }) => {
    const dataDir = join(tempDir(), 'inbox');
    const first = spawnCli(['listen', '--port', '0', '--data-dir', dataDir]);
    const [, url] = await first.waitFor(/^Listening on (\S+)$/m);
    const [, token] = await first.waitFor(/^Authorization: Bearer (\S+)$/m);
    expect(token!.length).toBeGreaterThanOrEqual(40);
    expect(statSync(join(dataDir, 'listen-token')).mode & 0o777).toBe(0o600);
    expect((await send(url!, payload({ document_id: 'doc_open' }))).status).toBe(401);
    const ok = await send(url!, payload({ document_id: 'doc_tok' }), { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    first.child.kill('SIGTERM');
    await first.child;
    // Printed once, on stderr only, as the line to copy.
    expect(first.stdout()).not.toContain(token!);
    expect(first.stderr().split(token!).length - 1).toBe(1);

    const second = spawnCli(['listen', '--port', '0', '--data-dir', dataDir]);
    const [, url2] = await second.waitFor(/^Listening on (\S+)$/m);
    await second.waitFor(/auth: bearer with the token kept in/);
    expect((await send(url2!, payload({ document_id: 'doc_2' }))).status).toBe(401);
    expect((await send(url2!, payload({ document_id: 'doc_3' }), { authorization: `Bearer ${token}` })).status).toBe(
      200,
    );
    second.child.kill('SIGTERM');
    await second.child;
    expect(second.output()).not.toContain(token!);

    const open = spawnCli(['listen', '--auth', 'none', '--port', '0', '--data-dir', dataDir]);
    const [, url3] = await open.waitFor(/^Listening on (\S+)$/m);
    expect((await send(url3!, payload({ document_id: 'doc_4' }))).status).toBe(200);
    open.child.kill('SIGTERM');
    await open.child;
  });
});

describe('listen: an output it did not make', () => {
  /** A CSV of 17 records as extract writes one (a batch run's, another listener's). */
  function invoicesCsv(path: string): string {
    const records = Array.from({ length: 17 }, (_, i) =>
      completedRecord({ file: `inv-${i}.pdf`, document_id: `doc_old_${i}`, route: 'inline' }, 1, {
        invoice_number: `INV-${i}`,
        total: 10 + i,
        lines: [{ description: 'Widget', amount: 10 + i }],
      }),
    );
    const text = [...csvChunks(records)].join('');
    writeFileSync(path, text);
    return text;
  }

  it('listen -o invoices.csv on an existing CSV of records: its 17 rows stay, events are appended under its header, across a restart', async ({
    spawnCli,
  }) => {
    const base = tempDir();
    const out = join(base, 'invoices.csv');
    const before = invoicesCsv(out);
    const args = ['listen', '--auth', 'none', '--port', '0', '--data-dir', join(base, 'inbox'), '-o', out];
    const first = spawnCli(args);
    const [, url] = await first.waitFor(/^Listening on (\S+)$/m);
    expect(readFileSync(out, 'utf8')).toBe(before);
    expect((await send(url!, payload({ document_id: 'doc_new_1' }))).status).toBe(200);
    await expect.poll(() => readCsvObjects(readFileSync(out, 'utf8')).length).toBe(18);
    first.child.kill('SIGINT');
    expect((await first.child).exitCode).toBe(0);

    const second = spawnCli(args);
    const [, url2] = await second.waitFor(/^Listening on (\S+)$/m);
    expect((await send(url2!, payload({ document_id: 'doc_new_2' }))).status).toBe(200);
    await expect.poll(() => readCsvObjects(readFileSync(out, 'utf8')).length).toBe(19);
    second.child.kill('SIGINT');
    expect((await second.child).exitCode).toBe(0);
    const text = readFileSync(out, 'utf8');
    expect(text.startsWith(before)).toBe(true);
    expect(readCsvObjects(text).map((r) => r.document_id)).toEqual([
      ...Array.from({ length: 17 }, (_, i) => `doc_old_${i}`),
      'doc_new_1',
      'doc_new_2',
    ]);
  });

  it('listen -o on a CSV of other columns, or on a JSON file (an array cannot grow): exit 2, says why and what to do, the file untouched', async ({
    spawnCli,
  }) => {
    const base = tempDir();
    const cases = [
      {
        name: 'people.csv',
        text: 'name,email\nAda,ada@example.com\n',
        says: /holds a CSV of other columns.*name a new file/,
      },
      {
        name: 'invoices.json',
        text: `${JSON.stringify([{ file: 'a.pdf', document_id: 'doc_a', status: 'completed' }])}\n`,
        says: /writes one JSON array, which cannot grow as documents arrive: use -o FILE\.jsonl, FILE\.csv or DIR\//,
      },
    ];
    for (const c of cases) {
      const out = join(base, c.name);
      writeFileSync(out, c.text);
      const run = spawnCli(['listen', '--auth', 'none', '--port', '0', '--data-dir', join(base, 'inbox'), '-o', out]);
      const done = await run.child;
      expect(done.exitCode, run.stderr()).toBe(2);
      expect(run.stderr()).toMatch(c.says);
      expect(run.stderr()).not.toMatch(/unexpected error|\n\s+at /);
      expect(readFileSync(out, 'utf8')).toBe(c.text);
    }
  });
});
