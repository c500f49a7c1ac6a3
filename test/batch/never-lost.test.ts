import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { parseJournal } from '../../src/journal/journal-read.ts';
import type { WriteBytes } from '../../src/journal/journal.ts';
import { rescuePlacesFor, takeBackRescued } from '../../src/journal/state/rescue.ts';
import { ExtractError } from '../../src/errors.ts';
import { KEY } from '../helpers/emulator.ts';
import { readJournalLines } from '../helpers/journal.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * In process: the journal's disk fills mid-run (a write that fails with
 * ENOSPC after taking part of its line, as a real full disk does), on any machine; the real
 * tmpfs is test/e2e/never-lost.proc.test.ts. The emulator ignores Idempotency-Key here, so every
 * extract request is a charge and a resend would show in the ledger.
 */

const enospc = (): Error =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });

/**
 * fs.writeSync until the `failAt`-th write, which takes half its bytes (as a disk filling up
 * does); the next write fails with ENOSPC, and so does every later one unless the disk `heals`
 * (space was freed a moment later: the retry at the end of the run finds it).
 */
function diskFullAt(failAt: number, heals = false): WriteBytes {
  let calls = 0;
  return (fd, bytes, offset, length) => {
    calls++;
    if (calls === failAt) return writeSync(fd, bytes, offset, Math.floor(length / 2));
    if (calls === failAt + 1 || (calls > failAt && !heals)) throw enospc();
    return writeSync(fd, bytes, offset, length);
  };
}

/** The rescue files beside a journal file. */
function rescueFiles(journal: string): string[] {
  const dir = `${journal}.rescue`;
  return existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : [];
}

function records(stdoutOrFile: string): Array<Record<string, unknown>> {
  return stdoutOrFile
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('a journal that cannot be written', () => {
  it('stops sending at once (exit 6), keeps what was charged in the rescue file, and the rerun takes it back and pays nothing again', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(6);
    const options = batchOptions(server.url, KEY, { route: 'inline', concurrency: 1, out: 'out.jsonl' });
    const journal = join(cwd, '.extract-state.jsonl');

    // -c 1, inline: sending, completed per document; the 4th write is the second document's result.
    const first = await run(cwd, ['in/'], options, { writeJournal: diskFullAt(4) });
    expect(first.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(first.summary.exit_code).toBe(6);
    expect(first.summary.stopped_by).toBe('journal');
    expect(first.stderr).toMatch(/could not be written \(the disk is full\): stopped sending/);
    const [rescue, ...more] = rescueFiles(journal);
    expect(more).toEqual([]);
    expect(first.stderr).toContain(`kept in ${rescue}`);
    expect(statSync(`${journal}.rescue`).mode & 0o777).toBe(0o700);
    expect(statSync(rescue!).mode & 0o777).toBe(0o600);
    expect(first.summary.completed).toBe(2);
    expect(first.summary.not_submitted).toBe(4);
    expect((await ledgerTotals(server.url)).net).toBe(2);
    // The second result is in the output though the journal could not take it, and its id is named.
    const out = records(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
    const second = out.find((r) => r.file === 'in/doc-01.pdf');
    expect(second).toMatchObject({ status: 'completed' });
    expect(first.stderr).toContain(`the documents they record: ${String(second?.document_id)}`);
    expect(readJournalLines(journal).torn).toBe(1);
    expect(parseJournal(readFileSync(rescue!, 'utf8')).facts.map((f) => f.fact)).toEqual(['completed']);

    const rerun = await run(cwd, ['in/'], options);
    expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/took back into the journal 1 fact/);
    expect(rescueFiles(journal)).toEqual([]);
    const ledger = await ledgerTotals(server.url);
    expect(ledger.net).toBe(6);
    expect([...ledger.reservesBySha.values()]).toEqual([1, 1, 1, 1, 1, 1]);
    expect(rerun.summary.skipped).toBe(2);
    expect(records(readFileSync(join(cwd, 'out.jsonl'), 'utf8')).map((r) => r.status)).toEqual(
      Array(6).fill('completed'),
    );
  }, 60_000);

  it('--move-done after a refused write moves nothing: the outcomes it kept are not on disk yet, and a moved file could come back as new', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(4);
    mkdirSync(join(cwd, 'done'));
    const options = batchOptions(server.url, KEY, { route: 'inline', concurrency: 1, moveDone: 'done' });
    const first = await run(cwd, ['in/'], options, { writeJournal: diskFullAt(4) });
    expect(first.summary.stopped_by).toBe('journal');
    expect(first.stderr).toMatch(/no file is moved this run/);
    expect(readdirSync(join(cwd, 'done'))).toEqual([]);
    expect(readdirSync(join(cwd, 'in'))).toHaveLength(4);
    const rerun = await run(cwd, ['in/'], options);
    expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
    expect(readdirSync(join(cwd, 'done'))).toHaveLength(4);
    expect((await ledgerTotals(server.url)).net).toBe(4);
  });

  it('a disk that frees up before the end takes the kept facts on the second try: no rescue file', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(4);
    const options = batchOptions(server.url, KEY, { route: 'inline', concurrency: 1 });
    const journal = join(cwd, '.extract-state.jsonl');
    const first = await run(cwd, ['in/'], options, { writeJournal: diskFullAt(2, true) });
    expect(first.summary.exit_code).toBe(6);
    expect(first.stderr).toMatch(/took the 1 fact it had refused on a second try/);
    expect(rescueFiles(journal)).toEqual([]);
    const known = parseJournal(readFileSync(journal, 'utf8')).facts.filter((f) => f.fact === 'completed');
    expect(known).toHaveLength(1);
    const rerun = await run(cwd, ['in/'], options);
    expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
    expect((await ledgerTotals(server.url)).net).toBe(4);
  });

  it('the rescue file waits while the journal still cannot take it: a clear error (exit 6), before anything is sent', async () => {
    const cwd = await invoiceDir(0);
    const journal = join(cwd, 'j.jsonl');
    const places = rescuePlacesFor(journal, true, { XDG_RUNTIME_DIR: join(cwd, 'run') });
    mkdirSync(`${journal}.rescue`, { mode: 0o700 });
    const rescue = join(`${journal}.rescue`, '1-a.jsonl');
    writeFileSync(rescue, '{"fact":"reset","at":"2026-11-23T02:00:00.000Z"}\n', { mode: 0o600 });
    const enospcAppend = async (): Promise<void> => {
      throw enospc();
    };
    const err = await takeBackRescued({ append: enospcAppend }, places, () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExtractError);
    expect(err).toMatchObject({ code: 'state' });
    expect(String(err)).toMatch(
      /still cannot be written \(the disk is full\): free space on the journal's disk, then rerun/,
    );
    expect(existsSync(rescue)).toBe(true);
  });
});

describe('a completed record is never replaced by a worse one', () => {
  it('--fresh stopped by a 402: the output keeps the completed records', async ({ emulator }) => {
    const server = await emulator({ idempotency_key: false, credits: 3 });
    const cwd = await invoiceDir(3);
    const options = batchOptions(server.url, KEY, { route: 'inline', out: 'out.jsonl' });
    const good = await run(cwd, ['in/'], options);
    expect(good.summary.exit_code).toBe(0);
    const before = readFileSync(join(cwd, 'out.jsonl'), 'utf8');
    const fresh = await run(cwd, ['in/'], { ...options, fresh: true });
    expect(fresh.summary.stopped_by).toBe('out_of_credits');
    expect(fresh.summary.not_submitted).toBe(3);
    expect(readFileSync(join(cwd, 'out.jsonl'), 'utf8')).toBe(before);
  }, 60_000);
});
