import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it, extract, reservesBySha } from './batch-helpers.ts';

/**
 * --settle on the built CLI: a PDF still being copied in (bytes appended every 200 ms while the
 * run goes on) is not sent; the run says so, lists it in --report and exits 0; once the copy is
 * done and has settled, the next run sends it. The window is 5 s and the writer 25 times faster,
 * so a loaded machine cannot make the file look settled.
 */
describe('--settle', () => {
  it('a file still being written is left for the next run (exit 0, a line, the report); the next run sends it, each document charged once', async ({
    serve,
  }) => {
    const { url } = await serve({ idempotency_key: false });
    const cwd = tempDir('extract-settle-');
    const drop = join(cwd, 'drop');
    mkdirSync(drop);
    writeFileSync(join(drop, 'old.pdf'), await invoicePdf(1));
    const whole = await invoicePdf(2);
    const half = join(drop, 'arriving.pdf');
    writeFileSync(half, whole.subarray(0, Math.floor(whole.length / 2)));
    let writing = true;
    const writer = (async () => {
      while (writing) {
        appendFileSync(half, ' ');
        await sleep(200);
      }
    })();
    const args = ['drop/', '--settle', '5', '--report', 'report.json', '-o', 'out.jsonl'];
    try {
      await sleep(5_500); // old.pdf settles; arriving.pdf keeps changing
      const first = await extract(cwd, url, args);
      expect(first.exitCode, first.stderr).toBe(0);
      expect(first.stderr).toMatch(
        /left 1 file changed in the last 5(\.0)? s \(--settle: still being written\?\) for the next run: drop\/arriving\.pdf/,
      );
      const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as {
        still_changing: Array<{ file: string; changed_ms_ago: number }>;
        documents: Array<{ file: string; outcome: string }>;
      };
      expect(report.still_changing.map((u) => u.file)).toEqual(['drop/arriving.pdf']);
      expect(report.documents.map((d) => [d.file, d.outcome])).toEqual([['drop/old.pdf', 'completed']]);
      expect((await reservesBySha(url)).size).toBe(1);
    } finally {
      writing = false;
      await writer;
    }

    writeFileSync(half, whole); // the copy finished
    await sleep(5_500);
    const second = await extract(cwd, url, args);
    expect(second.exitCode, second.stderr).toBe(0);
    const records = readFileSync(join(cwd, 'out.jsonl'), 'utf8').trim().split('\n');
    expect(records.map((l) => (JSON.parse(l) as { status: string }).status)).toEqual(['completed', 'completed']);
    const charges = await reservesBySha(url);
    expect([...charges.values()]).toEqual([1, 1]);
  });
});
