import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { describe, expect, onTestFinished } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/cli.ts';
import { journalFacts } from '../helpers/journal.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { extract, readJsonLines, reservesBySha, serveForFile } from './batch-helpers.ts';
import { dropDir, jsonLinesOf, startWatch, until as watched } from './watch-helpers.ts';

/**
 * Archives on the built CLI against a service that ignores Idempotency-Key (every POST extract
 * is a charge): killed mid-archive and rerun, each member is paid once; --move-done moves the
 * archive once all its parts are done; `status` names a failed part as `archive!member`.
 */

async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function invoices(n: number, from: number): Promise<Record<string, Uint8Array>> {
  const out: Record<string, Uint8Array> = {};
  for (let i = 0; i < n; i++) out[`nov/inv-${from + i}.pdf`] = await invoicePdf(from + i);
  return out;
}

const slow = serveForFile({ idempotency_key: false, processing: { ms_per_page: 400, concurrency: 2 } });

describe('archives, the built CLI', () => {
  it('SIGKILL mid-archive, then a rerun: every member completed, each charged exactly once', async () => {
    const url = slow();
    const cwd = tempDir('extract-archive-');
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in', 'batch.zip'), zipSync(await invoices(6, 7000)));
    const args = ['in/', '--route', 'upload', '-c', '8', '--poll-interval', '100ms'];
    const first = extract(cwd, url, args);
    // Killed once every member is submitted (paid for) and before the service has read them all.
    await until(() => journalFacts(cwd).filter((l) => l.fact === 'submitted').length === 6);
    first.kill('SIGKILL');
    await first;
    const killedSpace = (name: string) => name.startsWith(`extract-parts-${first.pid}-`);
    // Should the test fail before the rerun reclaims it, the killed run's space goes with the test.
    onTestFinished(() => {
      for (const name of readdirSync(tmpdir()).filter(killedSpace))
        rmSync(join(tmpdir(), name), { recursive: true, force: true });
    });
    expect(readdirSync(tmpdir()).some(killedSpace)).toBe(true);
    expect(journalFacts(cwd).filter((l) => l.fact === 'completed').length).toBeLessThan(6);

    const second = await extract(cwd, url, args);
    expect(second.exitCode, second.stderr).toBe(0);
    const records = readJsonLines(String(second.stdout));
    expect(records.map((r) => r.file).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `in/batch.zip!nov/inv-${7000 + i}.pdf`),
    );
    expect(records.every((r) => r.status === 'completed')).toBe(true);
    // The rerun removed the killed run's part space.
    expect(readdirSync(tmpdir()).some(killedSpace)).toBe(false);
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(6);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
  });

  it('--move-done moves the archive once every part is done; a failed part keeps it, and status names the part', async () => {
    const url = slow();
    const cwd = tempDir('extract-archive-');
    mkdirSync(join(cwd, 'drop'));
    mkdirSync(join(cwd, 'done'));
    writeFileSync(join(cwd, 'drop', 'good.zip'), zipSync(await invoices(2, 7100)));
    writeFileSync(
      join(cwd, 'drop', 'mixed.zip'),
      zipSync({ ...(await invoices(1, 7200)), 'broken.pdf': Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog') }),
    );
    const args = ['drop/', '--move-done', 'done', '--report', 'report.json', '-o', 'out.jsonl'];
    const run = await extract(cwd, url, args);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(readdirSync(join(cwd, 'done'))).toEqual(['good.zip']);
    expect(existsSync(join(cwd, 'drop', 'mixed.zip'))).toBe(true);
    const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as {
      documents: Array<{ file: string; moved_to?: string }>;
    };
    expect(report.documents.filter((d) => d.moved_to === 'done/good.zip').map((d) => d.file)).toEqual([
      'drop/good.zip!nov/inv-7100.pdf',
      'drop/good.zip!nov/inv-7101.pdf',
    ]);

    const status = await extract(cwd, url, ['status', '--failed', '--json']);
    expect(status.exitCode, status.stderr).toBe(0);
    const view = JSON.parse(String(status.stdout)) as { failed_documents: Array<{ file: string }> };
    expect(view.failed_documents.map((f) => f.file)).toEqual(['drop/mixed.zip!broken.pdf']);

    // Rerun: nothing charged again; the failure is set aside (known), and the archive with it stays.
    const again = await extract(cwd, url, args);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(existsSync(join(cwd, 'drop', 'mixed.zip'))).toBe(true);
    expect([...(await reservesBySha(url)).values()].every((n) => n === 1)).toBe(true);
  });

  it('extract watch: a zip dropped into the folder is its parts, each charged once; the zip stays, handled, not read again', async ({
    spawnCli,
  }) => {
    const url = slow();
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, url, ['in', '-o', 'out.jsonl', '--settle', '200ms']);
    writeFileSync(join(cwd, 'dropped.zip'), zipSync(await invoices(2, 7300)));
    renameSync(join(cwd, 'dropped.zip'), join(cwd, 'in', 'dropped.zip'));
    await watched(() => jsonLinesOf(join(cwd, 'out.jsonl')).length === 2, 'both members', watcher);
    expect(
      jsonLinesOf(join(cwd, 'out.jsonl'))
        .map((r) => [r.file, r.status])
        .sort(),
    ).toEqual([
      ['in/dropped.zip!nov/inv-7300.pdf', 'completed'],
      ['in/dropped.zip!nov/inv-7301.pdf', 'completed'],
    ]);
    // Another file dropped after: the zip is not read again (its members are not recorded twice).
    writeFileSync(join(cwd, 'later.pdf'), await invoicePdf(7400));
    renameSync(join(cwd, 'later.pdf'), join(cwd, 'in', 'later.pdf'));
    await watched(() => jsonLinesOf(join(cwd, 'out.jsonl')).length >= 3, 'the later file', watcher);
    expect(jsonLinesOf(join(cwd, 'out.jsonl'))).toHaveLength(3);
    expect(existsSync(join(cwd, 'in', 'dropped.zip'))).toBe(true);
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(3);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
  });
});
