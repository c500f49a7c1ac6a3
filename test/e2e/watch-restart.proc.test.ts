import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { it, extract, ledger, readJsonLines, reservesBySha, serveForFile } from './batch-helpers.ts';
import { dropDir, dropInvoices, jsonLinesOf, signal, startWatch, until } from './watch-helpers.ts';

/**
 * `extract watch` stopped, killed and run beside a cron run, against an emulator that ignores
 * Idempotency-Key (`idempotency_key: false`): every POST /extract is a charge, so only the
 * journal keeps a document from being paid twice. Each document's charges are counted in the ledger.
 */

async function extractPosts(url: string): Promise<number> {
  return (await ledger(url)).entries.filter((e) => e.kind === 'reserve').length;
}

function filesIn(...outputs: Array<Array<Record<string, unknown>>>): string[] {
  return outputs.flat().map((r) => String(r.file));
}

// --settle 200ms: the files are renamed into in/ whole (dropInvoices), so settling is incidental here.
// The stopped stream: 30 files at 150 ms a page, 2 at a time (2.3 s of work), stopped after a fifth
// are recorded, so most of it is still to do when the stop lands (40 files showed no more).
const MID_STREAM = 30;
// --poll-interval 250ms: a document left in flight is collected by polling; the default first
// wait (2 s) is incidental here, and was most of a restart's wait.
const PACE = ['--settle', '200ms', '--poll-interval', '250ms'];
describe('extract watch across stops', () => {
  // One serve for the tests of this pace (each counts only its own charges: ledger, reservesBySha);
  // the in-flight test needs a slower one of its own.
  const service = serveForFile({ idempotency_key: false, processing: { ms_per_page: 150, concurrency: 2 } });

  it('restarted mid-stream (systemctl restart: SIGTERM, then a new watcher): every file recorded once, each charged once', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const out = join(cwd, 'out.jsonl');
    const first = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', ...PACE]);
    const files = await dropInvoices(cwd, MID_STREAM);
    await until(() => jsonLinesOf(out).length >= MID_STREAM / 5, 'some records', first);
    signal(first, 'SIGTERM');
    expect((await first.child).exitCode, first.stderr()).toBe(0);
    expect(jsonLinesOf(out).length).toBeLessThan(MID_STREAM);

    const second = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', ...PACE]);
    await until(() => new Set(filesIn(jsonLinesOf(out))).size === MID_STREAM, 'all records', second);
    await new Promise((r) => setTimeout(r, 1500));
    const records = jsonLinesOf(out);
    expect(filesIn(records).sort()).toEqual([...files].sort());
    expect(records.filter((r) => r.status !== 'completed')).toEqual([]);
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(MID_STREAM);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
    expect(await extractPosts(url)).toBe(MID_STREAM);
  }, 300_000);

  it('killed mid-stream (SIGKILL) and restarted: nothing charged twice, and no file left without a record', async ({
    spawnCli,
  }) => {
    const url = service();
    const cwd = dropDir();
    const out = join(cwd, 'out.jsonl');
    const first = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', ...PACE]);
    const files = await dropInvoices(cwd, MID_STREAM);
    await until(() => jsonLinesOf(out).length >= MID_STREAM / 5, 'some records', first);
    first.child.kill('SIGKILL');
    await first.child;

    const second = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', ...PACE]);
    await until(() => new Set(filesIn(jsonLinesOf(out))).size === MID_STREAM, 'all records', second);
    await new Promise((r) => setTimeout(r, 1500));
    const records = jsonLinesOf(out);
    expect(filesIn(records).sort()).toEqual([...files].sort());
    // A request cut by the kill may have been charged: never sent again, said so, --retry-failed resends it.
    for (const r of records.filter((x) => x.status !== 'completed'))
      expect(String(r.error)).toMatch(/may have been charged.*--retry-failed/);
    expect([...(await reservesBySha(url)).values()].every((n) => n === 1)).toBe(true);
  }, 300_000);

  it('SIGTERM with documents in flight: exit 0, and the next watcher collects them without paying again', async ({
    serve,
    spawnCli,
  }) => {
    // One at a time, 750 ms each: two submitted while the first is still being read.
    const { url } = await serve({ idempotency_key: false, processing: { ms_per_page: 750, concurrency: 1 } });
    const cwd = dropDir();
    const out = join(cwd, 'out.jsonl');
    const first = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', ...PACE]);
    const files = await dropInvoices(cwd, 4);
    // Submitted (charged), not finished: in flight.
    await until(async () => (await extractPosts(url)) >= 2, 'two submissions', first);
    expect(jsonLinesOf(out).length, first.stderr()).toBeLessThan(4);
    signal(first, 'SIGTERM');
    const stopped = await first.child;
    expect(stopped.exitCode, first.stderr()).toBe(0);
    expect(first.stderr()).toMatch(/SIGTERM: stopping/);

    const second = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', ...PACE]);
    await until(() => new Set(filesIn(jsonLinesOf(out))).size === 4, 'all 4 records', second);
    const said = `first:\n${first.stderr()}\nsecond:\n${second.stderr()}`;
    expect(filesIn(jsonLinesOf(out)).sort(), said).toEqual([...files].sort());
    const reserves = await reservesBySha(url);
    expect(Object.fromEntries(reserves), said).toEqual(Object.fromEntries([...reserves.keys()].map((k) => [k, 1])));
    expect(reserves.size, said).toBe(4);
  }, 300_000);

  it('a watcher and a cron-style run on the same folder at once: each document charged once', async ({ spawnCli }) => {
    const url = service();
    const cwd = dropDir();
    const files = await dropInvoices(cwd, 30);
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'watch.jsonl', ...PACE]);
    const cron = await extract(cwd, url, ['in', '-q', '-o', 'cron.jsonl', '--poll-interval', '250ms']);
    // 0, or 5 when documents were still held by the watcher at the end (it collects them).
    expect([0, 5], String(cron.stderr)).toContain(cron.exitCode);
    const done = (): Set<string> =>
      new Set(
        [...jsonLinesOf(join(cwd, 'watch.jsonl')), ...readJsonLines(readFileOr(join(cwd, 'cron.jsonl')))]
          .filter((r) => r.status === 'completed')
          .map((r) => String(r.file)),
      );
    await until(() => done().size === 30, 'all 30 completed by one or the other', watcher);
    expect([...done()].sort()).toEqual([...files].sort());
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(30);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
    expect(await extractPosts(url)).toBe(30);
  }, 300_000);
});

function readFileOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
