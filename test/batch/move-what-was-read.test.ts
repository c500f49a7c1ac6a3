import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { moveInto } from '../../src/batch/finish/move.ts';
import { fileFacts } from '../../src/batch/facts.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Only what was read is moved: --move-done moves a file only while it is still the one whose
 * content its record is of. A file replaced (a rename over it) while its document is in flight
 * stays for the next run, which sends it. The emulator ignores Idempotency-Key, so every extract
 * request is a charge the ledger shows.
 */

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('--move-done moves only the file that was read', () => {
  it('a file replaced while its document was in flight stays where it is; the rerun sends it and then moves it', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(1);
    mkdirSync(join(cwd, 'done'));
    const path = join(cwd, 'in/doc-00.pdf');
    const original = readFileSync(path);
    const replacement = await invoicePdf(3000);
    writeFileSync(join(cwd, 'replacement.tmp'), replacement);
    const options = batchOptions(server.url, KEY, { route: 'upload', moveDone: 'done', out: 'out.jsonl' });

    // Upload-and-poll: the first sleep is the first poll's, after the bytes were sent.
    let replaced = false;
    const first = await run(cwd, ['in'], options, {
      onSleep: () => {
        if (replaced) return;
        replaced = true;
        renameSync(join(cwd, 'replacement.tmp'), path);
      },
    });
    expect(replaced).toBe(true);
    expect(first.summary.exit_code, first.stderr).toBe(0);
    expect(first.summary.documents).toMatchObject([{ outcome: 'completed', sha256: sha(original) }]);
    expect(first.summary.documents[0]?.moved_to).toBeUndefined();
    expect(readdirSync(join(cwd, 'done'))).toEqual([]);
    expect(readFileSync(path).equals(replacement)).toBe(true);
    expect(first.stderr).toMatch(
      /in\/doc-00\.pdf: changed after it was read \(rewritten or replaced\): left where it is/,
    );

    const rerun = await run(cwd, ['in'], options);
    expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
    expect(rerun.summary.documents).toMatchObject([
      { outcome: 'completed', sha256: sha(replacement), moved_to: join('done', 'doc-00.pdf') },
    ]);
    expect(existsSync(path)).toBe(false);
    const { reservesBySha } = await ledgerTotals(server.url);
    expect(Object.fromEntries(reservesBySha)).toEqual({ [sha(original)]: 1, [sha(replacement)]: 1 });
  });

  it("a move into a folder removes the copies a killed move left there (.NAME.moving-PID of a process that is gone), not a live process's", async () => {
    const cwd = await invoiceDir(1);
    mkdirSync(join(cwd, 'done'));
    // Beyond any pid_max: no such process. The parent of this test is alive.
    const dead = join(cwd, 'done', '.a.pdf.moving-2147483646');
    const live = join(cwd, 'done', `.b.pdf.moving-${process.ppid}`);
    writeFileSync(dead, 'half a copy');
    writeFileSync(live, 'a copy in progress');
    const from = join(cwd, 'in/doc-00.pdf');
    const { read } = await fileFacts(from, 1);
    expect(await moveInto(from, 'done', 'doc-00.pdf', cwd, read)).toEqual({ moved_to: join('done', 'doc-00.pdf') });
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });

  it('a file rewritten in place since it was read (same inode, new size and times) is not moved', async () => {
    const cwd = await invoiceDir(1);
    mkdirSync(join(cwd, 'done'));
    const from = join(cwd, 'in/doc-00.pdf');
    const { read } = await fileFacts(from, 1);
    writeFileSync(from, Buffer.concat([readFileSync(from), Buffer.from('\n')]));
    expect(await moveInto(from, 'done', 'doc-00.pdf', cwd, read)).toMatchObject({
      changed: expect.stringMatching(/changed after it was read/),
    });
    expect(readdirSync(join(cwd, 'done'))).toEqual([]);
  });
});
