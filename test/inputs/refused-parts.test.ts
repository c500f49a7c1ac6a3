import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { zipSync } from 'fflate';
import { describe, expect } from 'vitest';
import { runStatus } from '../../src/commands/status.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from '../batch/harness.ts';
import { KEY } from '../helpers/emulator.ts';
import { it } from '../helpers/fixtures.ts';
import { invoicePdf } from '../helpers/pdf.ts';

/**
 * A part of an archive refused on this machine (a `../` member, a link member, a bomb) is a
 * failure like a locked PDF: the night that meets it exits 1, later nights list it set aside
 * (exit 0, nothing sent), `extract status --failed` names it, and `--move-done` leaves its
 * archive in place with a line saying which part is not done. Against an emulator that ignores
 * Idempotency-Key: every POST extract is a reserve in its ledger.
 */

const LINK = { os: 3, attrs: (0o120777 << 16) >>> 0 };

async function failedInStatus(cwd: string): Promise<Array<{ file: string; error?: string | null }>> {
  const view = await runStatus(
    { state: '.extract-state.jsonl', json: true, leaseMs: 60_000, failed: true },
    { cwd, stdout: new Writable({ write: (_c, _e, cb) => cb() }), log: () => {} },
  );
  return (view.failed_documents ?? []).map((f) => ({ file: f.file, error: f.error }));
}

describe('refused parts of archives', () => {
  it('a zip with a ../ member and a link member: exit 1 the first night, then set aside (exit 0, nothing sent); status names them; --move-done keeps the zip, saying why', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(0);
    mkdirSync(join(cwd, 'done'));
    writeFileSync(
      join(cwd, 'in', 'hostile.zip'),
      zipSync({
        '../../escaped.pdf': await invoicePdf(8101),
        'link.pdf': [new TextEncoder().encode('/etc/passwd'), LINK],
        'fine.pdf': await invoicePdf(8102),
      }),
    );
    writeFileSync(join(cwd, 'in', 'good.zip'), zipSync({ 'a.pdf': await invoicePdf(8103) }));
    const options = batchOptions(server.url, KEY, { route: 'inline', moveDone: 'done' });

    // A dry run counts no credit for them, and says why they would not be sent.
    const dry = await run(cwd, ['in/'], { ...options, dryRun: true });
    expect(dry.summary.credits_estimate).toBe(2);
    expect(dry.stdout).toMatch(/^refuse +- +in\/hostile\.zip!link\.pdf {2}\(a symbolic link in the archive/m);

    const first = await run(cwd, ['in/'], options);
    expect(first.summary.exit_code, first.stderr).toBe(1);
    const refused = first.summary.documents.filter((d) => d.status === 'error').map((d) => d.file);
    expect(refused.sort()).toEqual(['in/hostile.zip!../../escaped.pdf', 'in/hostile.zip!link.pdf']);
    // Its refused members are not done: the zip stays, and a line says which part keeps it.
    expect(readdirSync(join(cwd, 'done'))).toEqual(['good.zip']);
    expect(existsSync(join(cwd, 'in', 'hostile.zip'))).toBe(true);
    expect(first.stderr).toMatch(
      /in\/hostile\.zip: left in place, not moved: its part in\/hostile\.zip!\.\.\/\.\.\/escaped\.pdf is not done \(.*"\.\."/,
    );
    expect((await ledgerTotals(server.url)).net).toBe(2);

    const failed = await failedInStatus(cwd);
    expect(failed.map((f) => f.file).sort()).toEqual(['in/hostile.zip!../../escaped.pdf', 'in/hostile.zip!link.pdf']);
    expect(failed.find((f) => f.file.endsWith('link.pdf'))?.error).toMatch(/a symbolic link/);

    for (const night of [2, 3]) {
      const again = await run(cwd, ['in/'], options);
      expect(again.summary.exit_code, `night ${night}: ${again.stderr}`).toBe(0);
      expect(again.summary).toMatchObject({ failed: 2, known_failures: 2 });
      expect(existsSync(join(cwd, 'in', 'hostile.zip'))).toBe(true);
    }
    const ledger = await ledgerTotals(server.url);
    expect(ledger.net).toBe(2);
    expect([...ledger.reservesBySha.values()].every((n) => n === 1)).toBe(true);
  });

  it('a zip bomb in a drop folder: exit 1 the night it arrives, then set aside (exit 0); a changed archive is said again', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(1);
    // 80 MiB of zeros deflate to some 80 KB: a ratio no document has.
    writeFileSync(join(cwd, 'in', 'bomb.zip'), zipSync({ 'zeros.pdf': new Uint8Array(80 * 1024 * 1024) }));
    const options = batchOptions(server.url, KEY, { route: 'inline' });

    const first = await run(cwd, ['in/'], options);
    expect(first.summary.exit_code, first.stderr).toBe(1);
    const bomb = first.summary.documents.find((d) => d.file === 'in/bomb.zip');
    expect(bomb?.error).toMatch(/expands to 80\.0 MiB .*a zip bomb\?\); none of its parts was sent/);

    const second = await run(cwd, ['in/'], options);
    expect(second.summary.exit_code, second.stderr).toBe(0);
    expect(second.summary).toMatchObject({ failed: 1, known_failures: 1 });
    expect((await failedInStatus(cwd)).map((f) => f.file)).toEqual(['in/bomb.zip']);

    // Another bomb under the same name is another archive: its night fails again.
    writeFileSync(join(cwd, 'in', 'bomb.zip'), zipSync({ 'zeros.pdf': new Uint8Array(81 * 1024 * 1024) }));
    const third = await run(cwd, ['in/'], options);
    expect(third.summary.exit_code, third.stderr).toBe(1);
    expect((await ledgerTotals(server.url)).net).toBe(1);
  });
});
