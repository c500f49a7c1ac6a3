import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { BatchDeps, BatchOptions, StopSignal } from '../../src/batch/options.ts';
import { batchOptionsFromFlags } from '../../src/cli/flags.ts';
import { RUN_FLAGS } from '../../src/flags/batch.ts';
import { parseFlags } from '../../src/flags/parse.ts';
import { runBatch } from '../../src/batch/run.ts';
import type { BatchSummary } from '../../src/batch/summary.ts';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';
import { LedgerBody } from '../../src/contract/index.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { tempDir } from '../helpers/cli.ts';

/**
 * In-process runs of `runBatch` (no child process): a fake clock whose sleeps return at once
 * and advance time, captured stdout and stderr, a journal in a temporary directory, and
 * hooks to send SIGINT/SIGTERM at a chosen moment. The service is the real emulator on
 * 127.0.0.1 port 0 (test/helpers/emulator.ts), a closed port, or an undici MockAgent.
 */

/** A working directory with `n` distinct invoices under in/ (doc-00.pdf ...), `pages` pages each. */
export async function invoiceDir(n: number, pages = 1): Promise<string> {
  const dir = tempDir('extract-run-');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(dir, 'in'));
  for (let i = 0; i < n; i++)
    writeFileSync(join(dir, 'in', `doc-${String(i).padStart(2, '0')}.pdf`), await invoicePdf(1000 + i, pages));
  return dir;
}

export const TEST_KEY_FALLBACK = 'ext_test_key_not_used_by_any_parser';

/**
 * A run's options as `extract` builds them when nothing is typed (the flag table's defaults,
 * so a new flag needs no line here), with the tests' own ahead of the overrides.
 */
export function batchOptions(baseUrl: string, apiKey: string, overrides: Partial<BatchOptions> = {}): BatchOptions {
  return {
    ...batchOptionsFromFlags(parseFlags(RUN_FLAGS, {}), { baseUrl, apiKey }, '.extract-state.jsonl'),
    inlineMax: 5_000_000,
    // A fake clock outruns the real emulator: a day of polling (a few hundred GETs) before the deadline.
    poll: { ...DEFAULT_POLL, timeoutMs: 24 * 3600_000 },
    noProgress: true,
    ...overrides,
  };
}

export type Run = { summary: BatchSummary; stdout: string; stderr: string; elapsedMs: number; sleeps: number[] };

export type RunHooks = {
  dispatcher?: Dispatcher;
  /** Called before every sleep of the run (backoff or poll), with the time it would wait. */
  onSleep?: (ms: number, signal: (s: StopSignal) => void) => void;
  /** How the journal file's bytes are written (a full disk). */
  writeJournal?: BatchDeps['writeJournal'];
  /** Files the plan takes at a time (a few, to cross windows with a small batch). */
  planWindow?: number;
  /** Called just before a document's bytes are read to be sent (a file changed after its plan). */
  beforeSend?: BatchDeps['beforeSend'];
  /** The run's environment (GITHUB_ACTIONS...); none by default. */
  env?: BatchDeps['env'];
};

/** One in-process run of `extract <inputs...>` in `cwd`, on a fake clock. */
export async function run(cwd: string, inputs: string[], options: BatchOptions, hooks: RunHooks = {}): Promise<Run> {
  let t = Date.parse('2026-11-23T02:00:00.000Z');
  const start = t;
  const sleeps: number[] = [];
  let out = '';
  let err = '';
  let handler: ((s: StopSignal) => void) | undefined;
  const signal = (s: StopSignal): void => handler?.(s);
  const deps: BatchDeps = {
    dispatcher: hooks.dispatcher,
    writeJournal: hooks.writeJournal,
    planWindow: hooks.planWindow,
    beforeSend: hooks.beforeSend,
    now: () => t,
    sleep: async (ms, abort) => {
      sleeps.push(ms);
      hooks.onSleep?.(ms, signal);
      if (abort?.aborted) return;
      t += ms;
      // Let real I/O (the emulator, the journal) move between fake sleeps: a thousandth of the fake
      // wait, so a day of fake polling lasts over a minute of real time for an engine slowed by a
      // loaded machine, while a backoff of a few seconds costs a few milliseconds.
      await new Promise((r) => setTimeout(r, Math.max(1, Math.min(50, ms / 1000))));
    },
    random: () => 0.5,
    log: () => {},
    cwd,
    env: hooks.env ?? {},
    stdout: new Writable({
      write: (c, _e, cb) => {
        out += String(c);
        cb();
      },
    }),
    stderr: new Writable({
      write: (c, _e, cb) => {
        err += String(c);
        cb();
      },
    }),
    isTTY: false,
    onSignal: (h) => {
      handler = h;
      return () => (handler = undefined);
    },
    exitNow: () => {},
    lock: { pid: process.pid, host: 'test', isAlive: () => false, now: () => t },
  };
  const summary = await runBatch(inputs, options, deps);
  return { summary, stdout: out, stderr: err, elapsedMs: t - start, sleeps };
}

export { journalFacts } from '../helpers/journal.ts';

/** A port on 127.0.0.1 nothing listens on: connections are refused at once. */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

/** The emulator's ledger: net pages (reserves minus refunds) in all, and reserves per content. */
export async function ledgerTotals(url: string): Promise<{ net: number; reservesBySha: Map<string, number> }> {
  const body = LedgerBody.parse(await (await fetch(`${url}/_emulator/ledger`)).json());
  let net = 0;
  const reservesBySha = new Map<string, number>();
  for (const e of body.entries) {
    if (e.kind === 'topup' || e.sha256 === null) continue;
    net += e.kind === 'reserve' ? e.pages : -e.pages;
    if (e.kind === 'reserve') reservesBySha.set(e.sha256, (reservesBySha.get(e.sha256) ?? 0) + 1);
  }
  return { net, reservesBySha };
}

export async function topUp(url: string, pages: number): Promise<void> {
  await fetch(`${url}/_emulator/credits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pages }),
  });
}
