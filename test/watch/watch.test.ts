import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { EventHandlers } from '../../src/watch/events.ts';
import { runWatch } from '../../src/watch/watch.ts';
import { batchOptions, ledgerTotals } from '../batch/harness.ts';
import { tempDir } from '../helpers/cli.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { lines, until, watchDeps } from './in-process.ts';
import { it } from '../helpers/fixtures.ts';

describe('watch in process', () => {
  it('an event that is lost: the file is still found by the rescan, once --rescan has passed', async ({ emulator }) => {
    const server = await emulator();
    const cwd = tempDir('extract-watch-');
    mkdirSync(join(cwd, 'in'));
    let ready = false;
    // Events that never come (a network share): the injected watcher delivers nothing.
    const w = watchDeps(cwd, { watchFolders: async () => ({ close: async () => {} }), ready: () => (ready = true) });
    const running = runWatch(
      ['in'],
      {
        batch: batchOptions(server.url, KEY, { state: undefined, out: 'out.jsonl' }),
        settle: 300,
        rescan: 4000,
        noEvents: false,
      },
      w.deps,
    );
    await until(() => ready, 'the first listing', w.stderr);
    const droppedAt = w.elapsed();
    writeFileSync(join(cwd, 'in', 'a.pdf'), await invoicePdf(1));
    await until(
      () => lines(join(cwd, 'out.jsonl')).length === 1,
      'the record',
      () => `${w.elapsed()} ${w.stderr()}`,
    );
    // Not before the next rescan: no event said the file was there.
    expect(w.elapsed() - droppedAt).toBeGreaterThanOrEqual(4000 - 300 - 500);
    w.stop();
    expect(await running).toBe(0);
    expect(lines(join(cwd, 'out.jsonl'))[0]).toMatchObject({ file: 'in/a.pdf', status: 'completed' });
  });

  it('an event sends the file once settled, long before the rescan; a file held open for writing waits', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = tempDir('extract-watch-');
    mkdirSync(join(cwd, 'in'));
    let on: EventHandlers | undefined;
    let ready = false;
    let open = true;
    const w = watchDeps(cwd, {
      watchFolders: async (_folders, _skip, handlers) => {
        on = handlers;
        return { close: async () => {} };
      },
      ready: () => (ready = true),
      openForWriting: async (paths) => new Set(open ? paths : []),
    });
    const running = runWatch(
      ['in'],
      {
        batch: batchOptions(server.url, KEY, { state: undefined, out: 'out.jsonl' }),
        settle: 300,
        rescan: 3_600_000,
        noEvents: false,
      },
      w.deps,
    );
    await until(() => ready && on !== undefined, 'the first listing', w.stderr);
    writeFileSync(join(cwd, 'in', 'a.pdf'), await invoicePdf(2));
    on!.touched('in/a.pdf');
    // Held open: settled by its stamp ten times over, still not sent.
    await new Promise((r) => setTimeout(r, 3000));
    expect(lines(join(cwd, 'out.jsonl'))).toEqual([]);
    open = false;
    await until(
      () => lines(join(cwd, 'out.jsonl')).length === 1,
      'the record',
      () => `${w.elapsed()} ${w.stderr()}`,
    );

    w.stop();
    expect(await running).toBe(0);
    expect(w.stderr()).toMatch(/in\/a\.pdf: completed \(doc_/);
  });
});

describe('watch: links planted in the drop folder after it starts', () => {
  it('a link to a private file, to a text file (--all-files) or to a folder is not sent through; a real file beside them is', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = tempDir('extract-watch-');
    mkdirSync(join(cwd, 'in'));
    // Elsewhere: a private PDF, a shadow-like text file, a folder of PDFs.
    const outside = tempDir('extract-secret-');
    const secret = await invoicePdf(9001);
    writeFileSync(join(outside, 'secret.pdf'), secret, { mode: 0o600 });
    const shadow = Buffer.from('root:$6$salt$hash:19000:0:99999:7:::\n');
    writeFileSync(join(outside, 'shadow'), shadow, { mode: 0o600 });
    chmodSync(join(outside, 'shadow'), 0o600);
    mkdirSync(join(outside, 'folder'));
    const inFolder = await invoicePdf(9002);
    writeFileSync(join(outside, 'folder', 'x.pdf'), inFolder);
    let on: EventHandlers | undefined;
    let ready = false;
    const w = watchDeps(cwd, {
      watchFolders: async (_folders, _skip, handlers) => {
        on = handlers;
        return { close: async () => {} };
      },
      ready: () => (ready = true),
    });
    const running = runWatch(
      ['in'],
      {
        batch: batchOptions(server.url, KEY, { state: undefined, out: 'out.jsonl', allFiles: true }),
        settle: 300,
        rescan: 3_600_000,
        noEvents: false,
      },
      w.deps,
    );
    await until(() => ready && on !== undefined, 'the first listing', w.stderr);
    symlinkSync(join(outside, 'secret.pdf'), join(cwd, 'in', 'leak.pdf'));
    symlinkSync(join(outside, 'shadow'), join(cwd, 'in', 'notes.txt'));
    symlinkSync(join(outside, 'folder'), join(cwd, 'in', 'linked'));
    writeFileSync(join(cwd, 'in', 'real.pdf'), await invoicePdf(3));
    // The paths chokidar reports (it follows a link to a folder and reports the files in it).
    for (const path of ['in/leak.pdf', 'in/notes.txt', 'in/linked/x.pdf', 'in/real.pdf']) on!.touched(path);
    await until(
      () => ['in/leak.pdf', 'in/notes.txt', 'in/linked/x.pdf', 'in/real.pdf'].every((f) => w.stderr().includes(f)),
      'a line about each file',
      w.stderr,
    );
    await until(() => lines(join(cwd, 'out.jsonl')).length >= 1, "the real file's record", w.stderr);
    w.stop();
    expect(await running).toBe(0);

    const { reservesBySha } = await ledgerTotals(server.url);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(reservesBySha.get(sha(secret)), w.stderr()).toBeUndefined();
    expect(reservesBySha.get(sha(shadow))).toBeUndefined();
    expect(reservesBySha.get(sha(inFolder))).toBeUndefined();
    expect(lines(join(cwd, 'out.jsonl')).map((l) => l.file)).toEqual(['in/real.pdf']);
    expect(w.stderr()).toMatch(/in\/leak\.pdf: left out: a symbolic link that leads outside in/);
    expect(w.stderr()).toMatch(/in\/linked\/x\.pdf: left out: a symbolic link that leads outside in/);
    // Nothing of the outside folder was touched.
    expect(existsSync(join(outside, 'secret.pdf'))).toBe(true);
  });

  it("chokidar's own events: a link to a private file and a link to a folder planted after start are not sent", async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = tempDir('extract-watch-');
    mkdirSync(join(cwd, 'in'));
    const outside = tempDir('extract-secret-');
    const secret = await invoicePdf(9011);
    writeFileSync(join(outside, 'secret.pdf'), secret, { mode: 0o600 });
    mkdirSync(join(outside, 'folder'));
    const inFolder = await invoicePdf(9012);
    writeFileSync(join(outside, 'folder', 'x.pdf'), inFolder);
    let ready = false;
    // The real file events (chokidar), not injected ones.
    const w = watchDeps(cwd, { ready: () => (ready = true) });
    // Absolute: chokidar resolves a relative folder against the process's working directory.
    const running = runWatch(
      [join(cwd, 'in')],
      {
        batch: batchOptions(server.url, KEY, { state: undefined, out: 'out.jsonl' }),
        settle: 300,
        rescan: 3_600_000,
        noEvents: false,
      },
      w.deps,
    );
    await until(() => ready && w.stderr().includes('watching '), 'the first listing', w.stderr);
    symlinkSync(join(outside, 'secret.pdf'), join(cwd, 'in', 'leak.pdf'));
    symlinkSync(join(outside, 'folder'), join(cwd, 'in', 'linked'));
    writeFileSync(join(cwd, 'in', 'real.pdf'), await invoicePdf(4));
    await until(
      () =>
        w.stderr().includes(join(cwd, 'in/leak.pdf')) &&
        lines(join(cwd, 'out.jsonl')).some((l) => l.file === join(cwd, 'in/real.pdf')),
      "a line about the link and the real file's record",
      w.stderr,
    );
    w.stop();
    expect(await running).toBe(0);
    const { reservesBySha } = await ledgerTotals(server.url);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(reservesBySha.get(sha(secret)), w.stderr()).toBeUndefined();
    expect(reservesBySha.get(sha(inFolder)), w.stderr()).toBeUndefined();
    expect(lines(join(cwd, 'out.jsonl')).map((l) => l.file)).toEqual([join(cwd, 'in/real.pdf')]);
    expect(w.stderr()).toMatch(/in\/leak\.pdf: left out: a symbolic link that leads outside/);
  });
});
