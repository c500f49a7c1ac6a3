import { createHash } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { extract, reservesBySha, serveForFile } from './batch-helpers.ts';
import { dropDir, dropInvoices, jsonLinesOf, signal, startWatch, until } from './watch-helpers.ts';

/** `extract watch` as a child process against a real `extract serve`, on a real folder. */

/** Writes `bytes` into `path` in `chunks` appends (the file closed between them), `gapMs` apart. */
async function writeSlowly(path: string, bytes: Buffer, chunks: number, gapMs: number): Promise<void> {
  const size = Math.ceil(bytes.length / chunks);
  for (let i = 0; i < chunks; i++) {
    appendFileSync(path, bytes.subarray(i * size, (i + 1) * size));
    if (i < chunks - 1) await new Promise((r) => setTimeout(r, gapMs));
  }
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

// Each test waits (`until`) up to 120 s for what the watcher does; the test's own bound sits above
// it, so a slow machine gets the watcher's stderr in the failure, not a bare time-out (a CI run
// timed the move test out at 30 s while it was still working).
// The slow writer takes longer than --settle in all (a rule timed from the first change would send
// it half-written) in gaps 7.5x shorter than --settle (the default 3 s against 430 ms gaps was 7x).
// The other tests' --settle 200ms is incidental to what they check: their files are written at once,
// and a file still open for writing waits whatever its stamp says.
const SLOW = { settle: '1500ms', chunks: 10, gapMs: 200 };

describe('extract watch', { timeout: 150_000 }, () => {
  // One `serve` for the file (a start each was a tenth of its time); each test's documents are its
  // own. No Idempotency-Key: every POST /extract is a charge, so a document sent twice shows in the
  // test that sent it, never as another test's cached answer.
  const service = serveForFile({ idempotency_key: false });

  it('a file written slowly in chunks, for longer than --settle, is sent once, complete: one charge, no failure', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', '--settle', SLOW.settle]);
    const pdf = await invoicePdf(7, 3);
    await writeSlowly(join(cwd, 'in', 'slow.pdf'), pdf, SLOW.chunks, SLOW.gapMs);
    await until(() => jsonLinesOf(join(cwd, 'out.jsonl')).length > 0, 'the record', watcher);
    // Anything sent half-written would have failed (422) and been recorded first.
    await new Promise((r) => setTimeout(r, 1000));
    expect(jsonLinesOf(join(cwd, 'out.jsonl'))).toMatchObject([{ file: 'in/slow.pdf', status: 'completed' }]);
    expect(Object.fromEntries(await reservesBySha(url))).toEqual({ [sha256(pdf)]: 1 });
    expect(watcher.stderr()).not.toMatch(/ error /);
    expect(watcher.stderr()).toMatch(/in\/slow\.pdf: completed \(doc_\w+, 3 pages\)/);
  });

  it('the control: with --settle 0s the same slow write is sent half-written and fails', async ({ spawnCli }) => {
    const url = service();
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', '--settle', '0s']);
    const pdf = await invoicePdf(8, 3);
    await writeSlowly(join(cwd, 'in', 'slow.pdf'), pdf, SLOW.chunks, SLOW.gapMs);
    await until(
      () => jsonLinesOf(join(cwd, 'out.jsonl')).some((r) => r.status === 'error'),
      'a half-written file to fail',
      watcher,
    );
  });

  it('a writer that pauses longer than --settle with the file still open (Linux): the file waits until it is closed', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', '--settle', '250ms']);
    const pdf = await invoicePdf(11, 2);
    const fd = openSync(join(cwd, 'in', 'paused.pdf'), 'w');
    try {
      writeSync(fd, pdf.subarray(0, pdf.length >> 1));
      // Four times --settle with nothing written: the settle rule alone would send half a PDF.
      await new Promise((r) => setTimeout(r, 1000));
      expect(jsonLinesOf(join(cwd, 'out.jsonl'))).toEqual([]);
      writeSync(fd, pdf.subarray(pdf.length >> 1));
    } finally {
      closeSync(fd);
    }
    await until(() => jsonLinesOf(join(cwd, 'out.jsonl')).length > 0, 'the record', watcher);
    expect(jsonLinesOf(join(cwd, 'out.jsonl'))).toMatchObject([{ file: 'in/paused.pdf', status: 'completed' }]);
    expect(Object.fromEntries(await reservesBySha(url))).toEqual({ [sha256(pdf)]: 1 });
  });

  it('files dropped at once, in two waves: one CSV row each under one header, each document charged once', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.csv', '--settle', '200ms', '-c', '8']);
    const started = Date.now();
    const rows = (): string[][] => {
      try {
        return parse(readFileSync(join(cwd, 'out.csv'), 'utf8'));
      } catch {
        return [];
      }
    };
    // The second wave lands once the first is written: appended by a later run of the pipeline to
    // an output that has its header already (50 files each: -c 8 still runs many at once; 200 in
    // one wave showed no more and cost 3x the engine time).
    // Waits for the records, so that a second header fails the assertion below, not a time-out.
    const records = (): number => rows().filter((r) => r[0] !== 'file').length;
    const files = await dropInvoices(cwd, 50);
    await until(() => records() === 50, 'the first 50 rows', watcher, 300_000);
    files.push(...(await dropInvoices(cwd, 50, 50)));
    await until(() => records() === 100, '100 rows', watcher, 300_000);
    const [header, ...body] = rows();
    expect(header?.slice(0, 3)).toEqual(['file', 'document_id', 'status']);
    expect(body.filter((r) => r[0] === 'file')).toEqual([]);
    expect(new Set(body.map((r) => r[0]))).toEqual(new Set(files));
    expect(body.every((r) => r[2] === 'completed')).toBe(true);
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(100);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
    // One log line per document.
    expect(watcher.stderr().match(/: completed \(doc_/g)).toHaveLength(100);
    process.stderr.write(`watch: 2 x 50 files dropped at once, all recorded in ${Date.now() - started} ms\n`);
  }, 330_000);

  it('documents a cron run completed are written to a new output from the journal, uncharged, and once across restarts', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    // Not the two waves' invoices: the service would answer their keys from its idempotency cache.
    const files = await dropInvoices(cwd, 5, 300);
    const cron = await extract(cwd, url, ['in', '-q', '-o', 'cron.jsonl']);
    expect(cron.exitCode, String(cron.stderr)).toBe(0);
    for (let run = 0; run < 2; run++) {
      // -v: the second start's "completed earlier" lines are debug lines (nothing written).
      const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'watch.jsonl', '--settle', '200ms', '-v']);
      await watcher.waitFor(/in\/inv-304\.pdf: completed earlier/, 60_000);
      signal(watcher, 'SIGTERM');
      expect((await watcher.child).exitCode).toBe(0);
    }
    const records = jsonLinesOf(join(cwd, 'watch.jsonl'));
    expect(records.map((r) => r.file).sort()).toEqual(files);
    expect(records.every((r) => r.status === 'completed')).toBe(true);
    expect([...(await reservesBySha(url)).values()]).toEqual([1, 1, 1, 1, 1]);
  }, 180_000);

  it('--no-events: a file no event announces is found by the rescan; SIGINT stops it with exit 0', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, url, [
      'in',
      '-o',
      'out.jsonl',
      '--no-events',
      '--rescan',
      '1s',
      '--settle',
      '200ms',
    ]);
    writeFileSync(join(cwd, 'in', 'a.pdf'), await invoicePdf(9));
    await until(() => jsonLinesOf(join(cwd, 'out.jsonl')).length === 1, 'the record', watcher);
    signal(watcher, 'SIGINT');
    const done = await watcher.child;
    expect(done.exitCode, watcher.stderr()).toBe(0);
    expect(watcher.stderr()).toMatch(/SIGINT: stopping/);
  });

  it('-o -: JSON Lines on stdout as documents complete; a reader that goes away stops the watcher with exit 8', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '--settle', '200ms']);
    writeFileSync(join(cwd, 'in', 'a.pdf'), await invoicePdf(12));
    await until(() => watcher.stdout().includes('\n'), 'the first line on stdout', watcher);
    expect(JSON.parse(watcher.stdout())).toMatchObject({ file: 'in/a.pdf', status: 'completed' });
    watcher.child.stdout!.destroy();
    writeFileSync(join(cwd, 'in', 'b.pdf'), await invoicePdf(13));
    const done = await watcher.child;
    expect(done.exitCode, watcher.stderr()).toBe(8);
    expect(watcher.stderr()).toMatch(/stdout's reader went away.*restart extract watch/);
    expect(watcher.stderr()).not.toMatch(/unexpected error| {4}at /);
  });

  it('a changed file is sent again as a new document; a file only touched is not', async ({ spawnCli }) => {
    const url = service();
    const cwd = dropDir();
    const out = join(cwd, 'out.jsonl');
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', '--settle', '200ms', '-v']);
    const path = join(cwd, 'in', 'a.pdf');
    writeFileSync(path, await invoicePdf(14));
    await until(() => jsonLinesOf(out).length === 1, 'the first record', watcher);
    writeFileSync(path, await invoicePdf(15));
    await until(() => jsonLinesOf(out).length === 2, 'the record of the new content', watcher);
    const later = new Date(Date.now() + 60_000);
    utimesSync(path, later, later);
    await watcher.waitFor(/in\/a\.pdf: completed earlier/, 30_000);
    const records = jsonLinesOf(out);
    expect(records).toHaveLength(2);
    expect(records[0]!.document_id).not.toBe(records[1]!.document_id);
    expect((await reservesBySha(url)).size).toBe(2);
  });

  it('--move-done/--move-failed: each file leaves the drop folder once its record is written; a name clash is suffixed', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    mkdirSync(join(cwd, 'done'));
    mkdirSync(join(cwd, 'failed'));
    writeFileSync(join(cwd, 'done', 'a.pdf'), 'an older a.pdf, kept');
    const watcher = await startWatch(spawnCli, cwd, url, [
      'in',
      '-o',
      'out.jsonl',
      '--settle',
      '200ms',
      '--move-done',
      'done',
      '--move-failed',
      'failed',
    ]);
    writeFileSync(join(cwd, 'in', 'a.pdf'), await invoicePdf(16));
    mkdirSync(join(cwd, 'in', 'sub'));
    writeFileSync(join(cwd, 'in', 'sub', 'b.pdf'), await invoicePdf(17));
    // A PDF by its first bytes that the service cannot read: sent, failed, moved to failed/.
    writeFileSync(join(cwd, 'in', 'bad.pdf'), '%PDF-1.4\nnothing of a PDF after its first line\n');
    await until(
      () => readdirSync(join(cwd, 'in'), { recursive: true }).filter((f) => String(f).endsWith('.pdf')).length === 0,
      'the drop folder emptied',
      watcher,
    );
    expect(readdirSync(join(cwd, 'done'), { recursive: true }).map(String).sort()).toEqual([
      'a (1).pdf',
      'a.pdf',
      'sub',
      join('sub', 'b.pdf'),
    ]);
    expect(readFileSync(join(cwd, 'done', 'a.pdf'), 'utf8')).toBe('an older a.pdf, kept');
    expect(readdirSync(join(cwd, 'failed'))).toEqual(['bad.pdf']);
    const records = jsonLinesOf(join(cwd, 'out.jsonl'));
    expect(records.map((r) => [r.file, r.status]).sort()).toEqual([
      ['in/a.pdf', 'completed'],
      ['in/bad.pdf', 'error'],
      ['in/sub/b.pdf', 'completed'],
    ]);
    // The line is written after the move: the folder can be empty before it is read here.
    await until(() => /in\/a\.pdf: moved to done\/a \(1\)\.pdf/.test(watcher.stderr()), 'the move logged', watcher);
  });

  it('a folder that is not there, or an output that cannot grow, is a usage error before anything is sent', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const env = { EXTRACT_API_KEY: 'ext_local_emulator_key_0001', EXTRACT_BASE_URL: url };
    const missing = await spawnCli(['watch', 'nope'], { cwd, env }).child;
    expect(missing.exitCode).toBe(2);
    const json = spawnCli(['watch', 'in', '-o', 'out.json'], { cwd, env });
    const done = await json.child;
    expect(done.exitCode).toBe(2);
    expect(json.stderr()).toMatch(/cannot grow.*-o FILE\.jsonl, FILE\.csv or DIR\//);
  });
});
