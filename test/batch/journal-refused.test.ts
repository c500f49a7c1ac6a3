import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Agent, type Dispatcher } from 'undici';
import { describe, expect } from 'vitest';
import { parseJournal } from '../../src/journal/journal-read.ts';
import { KEY } from '../helpers/emulator.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * The default (SQLite) journal refuses writes mid-run: another connection holds it in
 * BEGIN EXCLUSIVE past --state-wait. The emulator ignores Idempotency-Key, so every extract
 * request is a charge and a resend would show in the ledger; the answers in flight when the
 * journal stopped taking facts must reach the output and, through a rescue file, the journal.
 */

/** An undici agent that calls `onExtract(n)` as the n-th extract request leaves (before the service sees it). */
class Watching extends Agent {
  #n = 0;
  readonly #onExtract: (n: number) => void;
  constructor(onExtract: (n: number) => void) {
    super();
    this.#onExtract = onExtract;
  }
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (options.method === 'POST' && String(options.path).endsWith('/extract')) this.#onExtract(++this.#n);
    return super.dispatch(options, handler);
  }
}

function rescueFiles(journal: string): string[] {
  const dir = `${journal}.rescue`;
  return existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : [];
}

describe('a SQLite journal locked past --state-wait', () => {
  it('keeps every answer in flight (output, rescue file), and no rerun, plain or --retry-failed, pays again', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(6);
    const journal = join(cwd, 'journal.sqlite');
    const options = batchOptions(server.url, KEY, {
      route: 'inline',
      concurrency: 3,
      out: 'out.jsonl',
      state: journal,
      stateWait: 50,
    });
    let holder: DatabaseSync | undefined;
    // Another process's long transaction begins as the third request goes out: its answer, and
    // those of the requests beside it, find the journal locked.
    const dispatcher = new Watching((n) => {
      if (n !== 3) return;
      holder = new DatabaseSync(journal, { timeout: 0 });
      holder.exec('BEGIN EXCLUSIVE');
    });
    let first: Awaited<ReturnType<typeof run>>;
    try {
      first = await run(cwd, ['in/'], options, { dispatcher });
    } finally {
      holder?.exec('COMMIT');
      holder?.close();
      await dispatcher.close();
    }
    expect(first.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(first.summary.exit_code).toBe(6);
    expect(first.summary.stopped_by).toBe('journal');
    expect(first.stderr).toMatch(/could not be written \(another process holds it locked\): stopped sending/);
    const charged = (await ledgerTotals(server.url)).net;
    expect(charged).toBeGreaterThanOrEqual(3);
    // Every charged document is in the output, completed, and none is "uncertain".
    const out = readFileSync(join(cwd, 'out.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(out.filter((r) => r.status === 'completed')).toHaveLength(charged);
    expect(first.summary.failed).toBe(0);
    const [rescue, ...more] = rescueFiles(journal);
    expect(more).toEqual([]);
    expect(first.stderr).toContain(`kept in ${rescue}`);
    const kept = parseJournal(readFileSync(rescue!, 'utf8')).facts;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((f) => f.fact === 'completed')).toBe(true);

    const rerun = await run(cwd, ['in/'], options);
    expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/took back into the journal \d+ facts?/);
    expect(rescueFiles(journal)).toEqual([]);
    const retried = await run(cwd, ['in/'], { ...options, retryFailed: true });
    expect(retried.summary.exit_code, retried.stderr).toBe(0);
    const ledger = await ledgerTotals(server.url);
    expect([...ledger.reservesBySha.values()]).toEqual([1, 1, 1, 1, 1, 1]);
    expect(ledger.net).toBe(6);
  }, 60_000);
});
