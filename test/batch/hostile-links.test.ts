import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Drop folders are written by others: a file the walk saw, swapped for a symbolic link to a
 * private file elsewhere before its send (the beforeSend hook, no race), is never sent through
 * it, and a move folder's planted link never takes a file out of the move folder. The emulator
 * ignores Idempotency-Key, so every extract request is a reserve the ledger shows by content.
 */

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A private PDF in a folder of its own, outside every folder the run is given. */
async function secretPdf(): Promise<{ path: string; bytes: Buffer; dir: string }> {
  const dir = tempDir('extract-secret-');
  const bytes = await invoicePdf(9999);
  const path = join(dir, 'secret.pdf');
  writeFileSync(path, bytes, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { path, bytes, dir };
}

describe('a walked file swapped for a symbolic link before its send', () => {
  for (const route of ['inline', 'upload'] as const) {
    it(`${route}: the link is not followed; the secret it leads to is never charged`, async ({ emulator }) => {
      const server = await emulator({ idempotency_key: false });
      const cwd = await invoiceDir(2);
      const secret = await secretPdf();
      const swapped = join(cwd, 'in/doc-00.pdf');
      const options = batchOptions(server.url, KEY, { route, out: '-', format: 'jsonl', report: 'report.json' });

      const r = await run(cwd, ['in'], options, {
        beforeSend: (file) => {
          if (file !== 'in/doc-00.pdf') return;
          rmSync(swapped);
          symlinkSync(secret.path, swapped);
        },
      });
      const { reservesBySha } = await ledgerTotals(server.url);
      expect(reservesBySha.get(sha(secret.bytes)), r.stderr).toBeUndefined();
      expect(r.stdout).not.toContain('INV-09999');
      const swappedEntry = r.summary.documents.find((d) => d.file === 'in/doc-00.pdf');
      expect(swappedEntry?.outcome).not.toBe('completed');
      expect(r.stderr).toMatch(/in\/doc-00\.pdf: .*symbolic link/);
      // The other file of the folder is sent as ever.
      expect(r.summary.documents.find((d) => d.file === 'in/doc-01.pdf')).toMatchObject({ outcome: 'completed' });
    });
  }

  it('a folder on the path swapped for a link to elsewhere: the file under it is not read there', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = tempDir('extract-run-');
    mkdirSync(join(cwd, 'in/sub'), { recursive: true });
    writeFileSync(join(cwd, 'in/sub/secret.pdf'), await invoicePdf(1));
    const secret = await secretPdf();
    const options = batchOptions(server.url, KEY, { route: 'inline', out: '-', format: 'jsonl' });
    const r = await run(cwd, ['in'], options, {
      beforeSend: () => {
        rmSync(join(cwd, 'in/sub'), { recursive: true });
        symlinkSync(secret.dir, join(cwd, 'in/sub'));
      },
    });
    const { reservesBySha } = await ledgerTotals(server.url);
    expect(reservesBySha.get(sha(secret.bytes)), r.stderr).toBeUndefined();
    expect(r.summary.documents[0]?.outcome).not.toBe('completed');
    expect(r.stderr).toMatch(/in\/sub\/secret\.pdf: .*not inside the folder it was found in/);
  });

  it('--follow-links: a walked file swapped for a link is read at its target, as the walk would have', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(1);
    const other = await secretPdf();
    const swapped = join(cwd, 'in/doc-00.pdf');
    const options = batchOptions(server.url, KEY, { route: 'inline', out: '-', format: 'jsonl', followLinks: true });
    const r = await run(cwd, ['in'], options, {
      beforeSend: () => {
        rmSync(swapped);
        symlinkSync(other.path, swapped);
      },
    });
    expect(r.summary.exit_code, r.stderr).toBe(0);
    expect((await ledgerTotals(server.url)).reservesBySha.get(sha(other.bytes))).toBe(1);
  });
});

describe('--move-done never follows a link under its folder', () => {
  it('drop/done/sub -> elsewhere: the file stays in place, nothing is written elsewhere, exit 8, the link named', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = tempDir('extract-move-');
    const elsewhere = tempDir('extract-elsewhere-');
    mkdirSync(join(cwd, 'drop/done'), { recursive: true });
    mkdirSync(join(cwd, 'drop/sub'));
    symlinkSync(elsewhere, join(cwd, 'drop/done/sub'));
    // The writer chooses the name and the content: a PDF named as an ssh key.
    writeFileSync(join(cwd, 'drop/sub/authorized_keys'), await invoicePdf(7));
    const options = batchOptions(server.url, KEY, { out: 'out.jsonl', moveDone: 'drop/done', report: 'report.json' });

    const r = await run(cwd, ['drop'], options);
    expect(existsSync(join(elsewhere, 'authorized_keys')), r.stderr).toBe(false);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(r.summary.exit_code, r.stderr).toBe(8);
    expect(existsSync(join(cwd, 'drop/sub/authorized_keys'))).toBe(true);
    expect(r.stderr).toMatch(/drop\/sub\/authorized_keys: not moved to drop\/done: drop\/done\/sub is a symbolic link/);
    const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as {
      documents: Array<{ outcome: string; move_error?: string }>;
    };
    expect(report.documents[0]).toMatchObject({ outcome: 'completed', move_error: expect.stringMatching(/sub/) });
  });

  it('a link deeper in a move folder outside the drop folder is refused the same way', async ({ emulator }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = tempDir('extract-move-');
    const elsewhere = tempDir('extract-elsewhere-');
    mkdirSync(join(cwd, 'drop/a/b'), { recursive: true });
    mkdirSync(join(cwd, 'done/a'), { recursive: true });
    symlinkSync(elsewhere, join(cwd, 'done/a/b'));
    writeFileSync(join(cwd, 'drop/a/b/c.pdf'), await invoicePdf(8));
    const r = await run(cwd, ['drop'], batchOptions(server.url, KEY, { out: 'out.jsonl', moveDone: 'done' }));
    expect(r.summary.exit_code, r.stderr).toBe(8);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(existsSync(join(cwd, 'drop/a/b/c.pdf'))).toBe(true);
    expect(r.stderr).toMatch(/done\/a\/b is a symbolic link/);
  });
});
