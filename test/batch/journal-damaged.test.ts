import { copyFileSync, existsSync, openSync, closeSync, readSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { openState } from '../../src/journal/state/index.ts';
import { KEY } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/cli.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * A damaged SQLite journal stops the run; it never starts over and pays again. The emulator
 * ignores Idempotency-Key, so a document sent again would be a second charge in the ledger.
 */

const log = (): void => {};

/** Overwrites `length` bytes of `path` at `at` with bytes no SQLite frame checksum accepts. */
function scribble(path: string, at: number, length: number): void {
  const fd = openSync(path, 'r+');
  try {
    const bytes = Buffer.alloc(length);
    readSync(fd, bytes, 0, length, at);
    for (let i = 0; i < length; i++) bytes[i] = (bytes[i]! ^ 0x5a) & 0xff;
    writeSync(fd, bytes, 0, length, at);
  } finally {
    closeSync(fd);
  }
}

describe('a damaged journal', () => {
  it('a journal truncated to 0 bytes: exit 6 with what to do, nothing sent, and the ledger unchanged', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(3);
    const journal = join(cwd, 'journal.sqlite');
    const options = batchOptions(server.url, KEY, { route: 'inline', state: journal });
    const first = await run(cwd, ['in/'], options);
    expect(first.summary.exit_code, first.stderr).toBe(0);
    expect((await ledgerTotals(server.url)).net).toBe(3);

    truncateSync(journal, 0);
    const err = await run(cwd, ['in/'], options).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'state' });
    expect(String(err)).toMatch(/is damaged: it held \d+ facts .* now reads as no bytes/);
    expect(String(err)).toMatch(/Restore the file from a backup/);
    expect((await ledgerTotals(server.url)).net).toBe(3);
    // Stopping again and again changes nothing: the file stays as the user left it.
    const again = await run(cwd, ['in/'], options).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'state' });
    expect(statSync(journal).size).toBe(0);
    expect((await ledgerTotals(server.url)).net).toBe(3);
  });

  it('the JSON Lines journal cut short: exit 6, nothing sent, the ledger unchanged', async ({ emulator }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(3);
    const journal = join(cwd, 'journal.jsonl');
    const options = batchOptions(server.url, KEY, { route: 'inline', state: journal });
    expect((await run(cwd, ['in/'], options)).summary.exit_code).toBe(0);
    truncateSync(journal, 0);
    const err = await run(cwd, ['in/'], options).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'state' });
    expect(String(err)).toMatch(/is damaged: it was \d+ bytes when a run last wrote to it and is now 0/);
    expect((await ledgerTotals(server.url)).net).toBe(3);
  });

  it('a write-ahead log torn after a kill (the database file never checkpointed): a clear stop, not a new journal', async () => {
    const dir = tempDir('extract-wal-');
    const live = join(dir, 'live.sqlite');
    const j = await openState({ kind: 'sqlite', path: live }, { readOnly: false, leaseMs: 30_000, log });
    for (let n = 0; n < 5; n++)
      await j.append({
        fact: 'completed',
        at: new Date().toISOString(),
        sha256: String(n).padStart(64, '0'),
        target: 't',
        file: `in/${n}.pdf`,
        route: 'inline',
        document_id: `doc_${n}`,
        page_count: 1,
        results: { total: n },
      });
    // What a SIGKILL leaves: the database file, its log and the mark, copied while the writer still has them open.
    const killed = join(dir, 'killed.sqlite');
    for (const suffix of ['', '-wal', '.good']) copyFileSync(`${live}${suffix}`, `${killed}${suffix}`);
    await j.close();
    expect(statSync(`${killed}-wal`).size).toBeGreaterThan(4096);
    // The log's first frames overwritten (its header kept): SQLite drops every frame from there on.
    scribble(`${killed}-wal`, 32 + 24, 512);
    const err = await openState({ kind: 'sqlite', path: killed }, { readOnly: false, leaseMs: 30_000, log }).catch(
      (e: unknown) => e,
    );
    expect(err, String(err)).toMatchObject({ code: 'state' });
    expect(String(err)).toMatch(/is damaged: it held [1-9]\d* facts? when a run last wrote to it, and now reads as/);
  });

  it('a journal removed on purpose starts anew (its stale mark goes with it)', async () => {
    const dir = tempDir('extract-gone-');
    const path = join(dir, 'j.sqlite');
    const j = await openState({ kind: 'sqlite', path }, { readOnly: false, leaseMs: 30_000, log });
    await j.append({ fact: 'parser', at: new Date().toISOString(), target: 't', parser: 'par_1' });
    await j.close();
    expect(existsSync(`${path}.good`)).toBe(true);
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(`${path}${suffix}`)) truncateSync(`${path}${suffix}`, 0);
    const { rmSync } = await import('node:fs');
    rmSync(path);
    const again = await openState({ kind: 'sqlite', path }, { readOnly: false, leaseMs: 30_000, log });
    await again.close();
  });
});
