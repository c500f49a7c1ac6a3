import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { extract, reservesBySha, serveForFile } from './batch-helpers.ts';

/**
 * --move-done and --move-failed on the built CLI against a real `extract serve` that ignores
 * Idempotency-Key (every POST extract is a charge): files leave the drop folder once their record
 * is written, keep their path under the folder, never overwrite, cross file systems, stay put
 * (and say why) when the target refuses them, and cost nothing when dropped back in.
 */

type Entry = { file: string; outcome: string; status: string; moved_to?: string; move_error?: string };
const report = (cwd: string): { exit_code: number; documents: Entry[] } =>
  JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as { exit_code: number; documents: Entry[] };
const CORRUPT = '%PDF-1.4\n1 0 obj\n<< /Type /Catalog';

/** All charges stood once per content (the service ignores Idempotency-Key). */
async function charges(url: string): Promise<number[]> {
  return [...(await reservesBySha(url)).values()];
}

function files(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

// One `serve` for the file's tests (a start each was most of a short test); each counts only its own charges.
const service = serveForFile({ idempotency_key: false });

describe('--move-done and --move-failed', () => {
  it('completed files go to done/ with their path under the folder, a set-aside failure to failed/; a clash gets "name (1)"; dropped back in, a file costs nothing', async () => {
    const url = service();
    const cwd = tempDir('extract-move-');
    const drop = join(cwd, 'drop');
    mkdirSync(join(drop, 'sub'), { recursive: true });
    const a = await invoicePdf(1);
    writeFileSync(join(drop, 'a.pdf'), a);
    writeFileSync(join(drop, 'sub', 'b.pdf'), await invoicePdf(2));
    writeFileSync(join(drop, 'corrupt.pdf'), CORRUPT);
    mkdirSync(join(cwd, 'done'));
    mkdirSync(join(cwd, 'failed'));
    // Already in done/: a different file of the same name, which must survive.
    writeFileSync(join(cwd, 'done', 'a.pdf'), 'an earlier a.pdf');
    const args = [
      'drop/',
      '--move-done',
      'done',
      '--move-failed',
      'failed',
      '--report',
      'report.json',
      '-o',
      'out.jsonl',
    ];

    const first = await extract(cwd, url, args);
    expect(first.exitCode, first.stderr).toBe(1); // the corrupt file is a new failure
    expect(files(drop)).toEqual([]);
    expect(files(join(cwd, 'done'))).toEqual(['a (1).pdf', 'a.pdf', 'sub/b.pdf']);
    expect(readFileSync(join(cwd, 'done', 'a.pdf'), 'utf8')).toBe('an earlier a.pdf');
    expect(readFileSync(join(cwd, 'done', 'a (1).pdf')).equals(a)).toBe(true);
    expect(files(join(cwd, 'failed'))).toEqual(['corrupt.pdf']);
    expect(
      report(cwd)
        .documents.map((d) => [d.file, d.outcome, d.moved_to])
        .sort(),
    ).toEqual([
      ['drop/a.pdf', 'completed', join('done', 'a (1).pdf')],
      ['drop/corrupt.pdf', 'failed', join('failed', 'corrupt.pdf')],
      ['drop/sub/b.pdf', 'completed', join('done', 'sub', 'b.pdf')],
    ]);
    // The outputs were written before the moves: they hold every record.
    expect(readFileSync(join(cwd, 'out.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
    expect(await charges(url)).toEqual([1, 1]);

    // Dropped back in (a user's "once more"): known by its content, skipped, moved again, not charged.
    renameSync(join(cwd, 'done', 'a (1).pdf'), join(drop, 'again.pdf'));
    renameSync(join(cwd, 'failed', 'corrupt.pdf'), join(drop, 'corrupt.pdf'));
    const again = await extract(cwd, url, args);
    expect(again.exitCode, again.stderr).toBe(0); // the corrupt file is known now
    expect(
      report(cwd)
        .documents.map((d) => [d.file, d.outcome, d.moved_to])
        .sort(),
    ).toEqual([
      ['drop/again.pdf', 'skipped', join('done', 'again.pdf')],
      ['drop/corrupt.pdf', 'left', join('failed', 'corrupt.pdf')],
    ]);
    expect(files(drop)).toEqual([]);
    expect(await charges(url)).toEqual([1, 1]);
  }, 120_000);

  it('a failure that may pass next time stays in the drop folder for the rerun that heals it', async () => {
    // The file's serve: its fault rule fires once (times: 1), and is cleared whatever happens.
    const url = service();
    onTestFinished(async () => {
      await fetch(`${url}/_emulator/faults`, { method: 'DELETE' });
    });
    const cwd = tempDir('extract-move-');
    mkdirSync(join(cwd, 'drop'));
    mkdirSync(join(cwd, 'failed'));
    writeFileSync(join(cwd, 'drop', 'a.pdf'), await invoicePdf(3));
    // A 429 whose Retry-After (301 s) is past the longest the client waits (5 min): rate limited
    // at once, retryable, uncharged, with no in-run backoff (a 1 s Retry-After took 9-16 s of retries).
    const rule = await fetch(`${url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        operation: 'extract-inline',
        probability: 1,
        effect: { type: 'status', status: 429, retry_after: 301 },
        times: 1,
      }),
    });
    expect(rule.status, await rule.text()).toBeLessThan(300);
    const r = await extract(cwd, url, ['drop/', '--move-failed', 'failed', '--report', 'report.json']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/still rate limiting \(429\)/);
    expect(files(join(cwd, 'drop'))).toEqual(['a.pdf']);
    expect(files(join(cwd, 'failed'))).toEqual([]);
  });

  it('a move folder inside the drop folder is not walked: the next run finds nothing to do', async () => {
    const url = service();
    const cwd = tempDir('extract-move-');
    mkdirSync(join(cwd, 'drop', 'done'), { recursive: true });
    writeFileSync(join(cwd, 'drop', 'a.pdf'), await invoicePdf(4));
    const args = ['drop/', '--move-done', 'drop/done', '--report', 'report.json'];
    expect((await extract(cwd, url, args)).exitCode).toBe(0);
    expect(files(join(cwd, 'drop'))).toEqual(['done/a.pdf']);
    const second = await extract(cwd, url, args);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/nothing to do/);
    expect(files(join(cwd, 'drop'))).toEqual(['done/a.pdf']);
  });

  it('a read-only or missing target: the file stays, the report and stderr say why, exit 8; fixed, the rerun moves it and pays nothing', async () => {
    const url = service();
    const cwd = tempDir('extract-move-');
    const drop = join(cwd, 'drop');
    mkdirSync(drop);
    mkdirSync(join(cwd, 'done'));
    writeFileSync(join(drop, 'a.pdf'), await invoicePdf(5));
    chmodSync(join(cwd, 'done'), 0o555);
    // Root writes anywhere: the client runs as nobody, so that a read-only folder is real.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      chmodSync(cwd, 0o755);
      for (const p of [cwd, drop, join(drop, 'a.pdf')]) chownSync(p, 65534, 65534);
    }
    const as = asRoot ? { uid: 65534 } : {};
    const args = ['drop/', '--move-done', 'done', '--report', 'report.json', '-o', 'out.jsonl'];

    const refused = await extract(cwd, url, args, as);
    expect(refused.exitCode, refused.stderr).toBe(8);
    expect(refused.stderr).toMatch(/drop\/a\.pdf: not moved to done: .*permission denied.*the file stays where it is/);
    expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(files(drop)).toEqual(['a.pdf']);
    expect(report(cwd).documents[0]).toMatchObject({ outcome: 'completed', move_error: expect.stringMatching(/done/) });
    expect(readFileSync(join(cwd, 'out.jsonl'), 'utf8')).toMatch(/"status":"completed"/);

    const missing = await extract(cwd, url, ['drop/', '--move-done', 'nowhere', '--report', 'report.json'], as);
    // A mistyped folder is found before anything is sent: one line, not one per file.
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/^extract: --move-done nowhere: no such folder: create it/);
    expect(missing.stderr.match(/nowhere/g)).toHaveLength(2);
    expect(existsSync(join(cwd, 'nowhere'))).toBe(false);
    expect(files(drop)).toEqual(['a.pdf']);

    chmodSync(join(cwd, 'done'), 0o777);
    const fixed = await extract(cwd, url, args, as);
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect(files(join(cwd, 'done'))).toEqual(['a.pdf']);
    expect(files(drop)).toEqual([]);
    expect(await charges(url)).toEqual([1]);
  }, 120_000);

  it('across file systems (here /tmp and /dev/shm): copied, synced, then removed', async (t) => {
    const other = '/dev/shm';
    const cwd = tempDir('extract-move-');
    if (!existsSync(other) || statSync(other).dev === statSync(cwd).dev)
      t.skip(`${other} is not another file system here; the same-file-system move is covered above`);
    const done = mkdtempSync(join(other, 'extract-done-'));
    onTestFinished(() => rmSync(done, { recursive: true, force: true }));
    const url = service();
    mkdirSync(join(cwd, 'drop', 'sub'), { recursive: true });
    const b = await invoicePdf(6);
    writeFileSync(join(cwd, 'drop', 'sub', 'b.pdf'), b);
    writeFileSync(join(done, 'clash.txt'), '');
    mkdirSync(join(done, 'sub'));
    writeFileSync(join(done, 'sub', 'b.pdf'), 'taken');
    const r = await extract(cwd, url, ['drop/', '--move-done', done, '--report', 'report.json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(files(join(cwd, 'drop'))).toEqual([]);
    expect(readFileSync(join(done, 'sub', 'b (1).pdf')).equals(b)).toBe(true);
    expect(readFileSync(join(done, 'sub', 'b.pdf'), 'utf8')).toBe('taken');
    // No temporary copy left behind.
    expect(files(done)).toEqual(['clash.txt', 'sub/b (1).pdf', 'sub/b.pdf']);
    expect(report(cwd).documents[0]?.moved_to).toBe(join(done, 'sub', 'b (1).pdf'));
    expect(tmpdir()).not.toBe(other);
  });
});
