import { afterEach, describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { startServer, type RunningServer } from '../../src/emulator/server.ts';
import type { Engine } from '../../src/engine/types.ts';
import { it } from '../helpers/fixtures.ts';
import type { EmulatorConfigInput } from '../../src/contract/index.ts';
import { replayJournal } from '../../src/journal/journal-read.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { batchOptions, closedPort, invoiceDir, journalFacts, ledgerTotals, run, topUp } from './harness.ts';

/**
 * Unattended runs (cron, CI): the batch client run in process against the real emulator on
 * 127.0.0.1 (or a closed port), on a fake clock, so that backoff, the circuit breaker and the
 * poll deadline take no real time. Each test counts what it claims: exit codes, records,
 * and the emulator's ledger.
 */

const KEY = DEFAULT_CONFIG.parsers[0]!.api_keys[0]!;
const servers = new Set<RunningServer>();
afterEach(async () => {
  await Promise.all([...servers].map((s) => s.close()));
  servers.clear();
});

async function emulator(
  engine: Engine,
  overrides: Partial<EmulatorConfigInput> = {},
  port = 0,
  sleep?: (ms: number) => Promise<void>,
): Promise<RunningServer> {
  const server = await startServer({
    config: { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 4 }, ...overrides },
    host: '127.0.0.1',
    port,
    inMemory: true,
    log: () => {},
    // The file's one engine pool, as test/helpers/emulator.ts gives its emulators (a pool each was
    // a Node process and pdfjs loaded per emulator, several per test).
    engine,
    ...(sleep ? { deps: { sleep } } : {}),
  });
  servers.add(server);
  return server;
}

async function addFault(url: string, rule: unknown): Promise<void> {
  const res = await fetch(`${url}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  expect(res.status).toBe(200);
}

const records = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('unattended runs heal themselves', () => {
  it('service down, then back: a plain rerun sends what failed at no cost, exit 0, each document charged once', async ({
    sharedEngine,
  }) => {
    const cwd = await invoiceDir(4);
    // The emulator's address, closed for the first run: connections are refused.
    const probe = await emulator(sharedEngine);
    const url = probe.url;
    await probe.close();
    servers.delete(probe);

    const down = await run(cwd, ['in/'], batchOptions(url, KEY));
    expect(down.summary.completed).toBe(0);
    expect(down.summary.exit_code).not.toBe(0);

    const up = await emulator(sharedEngine, {}, Number(new URL(url).port));
    const again = await run(cwd, ['in/'], batchOptions(up.url, KEY));
    expect(again.stderr).not.toMatch(/--retry-failed/);
    expect(again.summary.exit_code, again.stderr).toBe(0);
    expect(again.summary.completed).toBe(4);
    const ledger = await ledgerTotals(up.url);
    expect([...ledger.reservesBySha.values()]).toEqual([1, 1, 1, 1]);
    expect(again.summary.pages_charged).toBe(ledger.net);
  });

  it("the service's own 500 on POST extract (a JSON error body) is retried in the run, and on a plain rerun", async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(3);
    // Every inline extract fails with the emulator's own 500 (JSON body, nothing charged).
    await addFault(server.url, {
      operation: 'extract-inline',
      probability: 1,
      effect: { type: 'status', status: 500 },
    });
    const first = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(first.summary.failed).toBe(3);
    expect(first.summary.exit_code).toBe(1);
    // Retried within the run, on the backoff schedule (6 attempts per document).
    const rules = (await (await fetch(`${server.url}/_emulator/faults`)).json()) as {
      rules: Array<{ applied: number }>;
    };
    expect(rules.rules[0]!.applied).toBe(3 * 6);
    const failed = journalFacts(cwd).filter((f) => f.fact === 'failed');
    expect(failed.every((f) => f.charge === 'none' && f.request === undefined)).toBe(true);

    await fetch(`${server.url}/_emulator/faults`, { method: 'DELETE' });
    const second = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(second.summary.exit_code, second.stderr).toBe(0);
    expect(second.summary.completed).toBe(3);
    expect([...(await ledgerTotals(server.url)).reservesBySha.values()]).toEqual([1, 1, 1]);
  });

  it("a proxy's 502 on POST extract stays visible: a plain rerun does not resend it; --retry-failed does, under the same key", async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(2);
    await addFault(server.url, {
      operation: 'extract-inline',
      probability: 1,
      effect: { type: 'status', status: 502 },
    });
    const first = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(first.summary.failed).toBe(2);
    await fetch(`${server.url}/_emulator/faults`, { method: 'DELETE' });
    const plain = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(plain.summary.exit_code).toBe(1);
    expect(plain.summary.documents.map((d) => d.outcome)).toEqual(['left', 'left']);
    expect(plain.stderr).toMatch(/--retry-failed/);
    const retried = await run(cwd, ['in/'], batchOptions(server.url, KEY, { retryFailed: true }));
    expect(retried.summary.exit_code).toBe(0);
    expect([...(await ledgerTotals(server.url)).reservesBySha.values()]).toEqual([1, 1]);
  });

  it('an unreadable document is not retried by a plain rerun', async ({ sharedEngine }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(1);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(cwd, 'in', 'broken.pdf'), '%PDF-1.4\nthis is not a PDF at all\n');
    const first = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(first.summary.failed).toBe(1);
    const second = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(second.summary.documents.find((d) => d.file.endsWith('broken.pdf'))?.outcome).toBe('left');
  });
});

describe('the circuit breaker', () => {
  it('41 files against a closed port: stops within 15 s with one line naming the base URL, exit 7, all not submitted', async () => {
    const cwd = await invoiceDir(41);
    const url = await closedPort();
    const r = await run(cwd, ['in/'], batchOptions(url, KEY));
    expect(r.summary.exit_code).toBe(7);
    expect(r.elapsedMs).toBeLessThan(15_000);
    expect(r.summary.not_submitted).toBe(41);
    expect(records(r.stdout).every((rec) => rec.status === 'not_submitted' && rec.document_id === null)).toBe(true);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines.filter((l) => l.includes(url))).not.toHaveLength(0);
    expect(lines.length, r.stderr).toBeLessThan(10);
    // Nothing was sent, so the journal holds no failure a rerun would have to be told about.
    expect(journalFacts(cwd).filter((f) => f.fact === 'failed' && f.charge !== 'none')).toEqual([]);
  });

  it('opens mid-batch when the service goes away; submitted documents stay pending with their document_id', async ({
    sharedEngine,
  }) => {
    let gateOpen: () => void = () => {};
    const gate = new Promise<void>((r) => (gateOpen = r));
    const server = await emulator(sharedEngine, { processing: { ms_per_page: 1, concurrency: 4 } }, 0, (ms) =>
      ms > 0 ? gate : Promise.resolve(),
    );
    const cwd = await invoiceDir(6);
    let closing: Promise<void> | undefined;
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'upload', concurrency: 2 }), {
      onSleep: () => {
        // The first poll: two documents are submitted; the service goes away.
        if (closing === undefined && journalFacts(cwd).filter((f) => f.fact === 'submitted').length >= 2) {
          gateOpen();
          closing = server.close();
        }
      },
    });
    await closing;
    servers.delete(server);
    expect(r.summary.exit_code).toBe(7);
    const outcomes = r.summary.documents.map((d) => d.outcome);
    // The two submitted before it went away: still pending, or completed if the service finished one
    // in the moment between its gate opening and its close (its engine runs apart from the API).
    expect(outcomes.filter((o) => o === 'pending').length).toBeGreaterThanOrEqual(1);
    expect(outcomes.filter((o) => o === 'pending' || o === 'completed').length).toBeGreaterThanOrEqual(2);
    // A request cut by the shutdown is a failure, visible, and its charge in the journal says what
    // the client knows: an extract request in flight (`sending` its last fact before) may have been
    // charged, 'uncertain'; one cut earlier (upload-url, the PUT) or refused unsent charged nothing.
    const facts = journalFacts(cwd);
    for (const d of r.summary.documents) {
      if (d.outcome === 'failed') {
        const own = facts.filter((f) => 'sha256' in f && f.sha256 === d.sha256);
        const at = own.findIndex((f) => f.fact === 'failed');
        const inFlight = own[at - 1]?.fact === 'sending';
        expect(own[at]?.charge, JSON.stringify(own)).toBe(inFlight ? 'uncertain' : 'none');
      } else expect(['pending', 'not_submitted', 'completed']).toContain(d.outcome);
    }
    for (const d of r.summary.documents.filter((x) => x.outcome === 'pending')) expect(d.document_id).not.toBeNull();
  });
});

describe('pages charged add up to the ledger', () => {
  it('402 mid-batch, top-up, resume: each run counts what it caused, and the sum is the ledger', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine, { credits: 5 });
    const cwd = await invoiceDir(6, 2);
    const first = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'upload', concurrency: 1 }));
    expect(first.summary.exit_code).toBe(3);
    const after1 = await ledgerTotals(server.url);
    expect(first.summary.pages_charged).toBe(after1.net);
    await topUp(server.url, 100);
    const second = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'upload', concurrency: 4 }));
    expect(second.summary.exit_code, second.stderr).toBe(0);
    const after2 = await ledgerTotals(server.url);
    expect(first.summary.pages_charged + second.summary.pages_charged).toBe(after2.net);
    expect(after2.net).toBe(12);
  });

  it('SIGTERM during the first poll: records are pending with document_id and page_count, counted; the rerun adds only the rest', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine, { processing: { ms_per_page: 200, concurrency: 1 } });
    const cwd = await invoiceDir(3, 3);
    let sent = false;
    const first = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'upload' }), {
      onSleep: (ms, signal) => {
        if (!sent && ms === 2000) {
          sent = true;
          signal('SIGTERM');
        }
      },
    });
    expect(first.summary.exit_code).toBe(130);
    const pending = records(first.stdout).filter((r) => r.status === 'pending');
    expect(pending.length).toBeGreaterThan(0);
    for (const p of pending) {
      expect(p.document_id).toEqual(expect.any(String));
      expect(p.page_count).toBe(3);
    }
    expect(records(first.stdout).some((r) => r.status === 'not_submitted' && r.document_id !== null)).toBe(false);
    const after1 = await ledgerTotals(server.url);
    expect(first.summary.pages_charged).toBe(after1.net);
    const second = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'upload' }));
    expect(second.summary.exit_code, second.stderr).toBe(0);
    const after2 = await ledgerTotals(server.url);
    expect(first.summary.pages_charged + second.summary.pages_charged).toBe(after2.net);
    expect(after2.net).toBe(9);
  });

  it('Ctrl+C with documents in flight: one line for all still processing, and the hint to press it again once', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine, { processing: { ms_per_page: 200, concurrency: 1 } });
    const cwd = await invoiceDir(4, 3);
    let sent = false;
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'upload' }), {
      onSleep: (ms, signal) => {
        if (!sent && ms === 2000) {
          sent = true;
          signal('SIGINT');
        }
      },
    });
    expect(r.summary.exit_code).toBe(130);
    const pending = records(r.stdout).filter((p) => p.status === 'pending');
    expect(pending.length, r.stderr).toBeGreaterThan(1);
    const lines = r.stderr.split('\n');
    const still = lines.filter((l) => l.includes('still processing when the run stopped'));
    expect(still, r.stderr).toHaveLength(1);
    expect(still[0]).toContain(`${pending.length} documents: still processing when the run stopped`);
    expect(
      lines.filter((l) => l.includes('press Ctrl+C again')),
      r.stderr,
    ).toHaveLength(1);
  });

  it('the poll deadline: pending records carry document_id and page_count (exit 5); pages charged counts them', async ({
    sharedEngine,
  }) => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const server = await emulator(sharedEngine, { processing: { ms_per_page: 1, concurrency: 4 } }, 0, (ms) =>
      ms > 0 ? gate : Promise.resolve(),
    );
    try {
      const cwd = await invoiceDir(2, 2);
      const options = batchOptions(server.url, KEY, { route: 'upload', out: 'out.json' });
      const r = await run(cwd, ['in/'], { ...options, poll: { ...options.poll, timeoutMs: 15 * 60_000 } });
      expect(r.summary.exit_code).toBe(5);
      const out = JSON.parse(readFileSync(join(cwd, 'out.json'), 'utf8')) as Array<Record<string, unknown>>;
      expect(out.map((x) => x.status)).toEqual(['pending', 'pending']);
      expect(out.map((x) => x.page_count)).toEqual([2, 2]);
      expect(r.summary.pages_charged).toBe((await ledgerTotals(server.url)).net);
      expect(r.summary.pages_charged).toBe(4);
    } finally {
      release();
    }
  });
});

describe('duplicates and rate limits', () => {
  it('two files with one content are one document: sent once, recorded under both names, charged once', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(2, 2);
    const { copyFileSync } = await import('node:fs');
    copyFileSync(join(cwd, 'in', 'doc-00.pdf'), join(cwd, 'in', 'doc-00-copy.pdf'));
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(r.summary.exit_code).toBe(0);
    expect(r.summary.completed).toBe(3);
    const ledger = await ledgerTotals(server.url);
    expect([...ledger.reservesBySha.values()]).toEqual([1, 1]);
    expect(r.summary.pages_charged).toBe(ledger.net);
    expect(ledger.net).toBe(4);
  });

  it('429s on POST extract are retried in the run: every document completes, each charged once', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(6);
    await addFault(server.url, {
      operation: 'extract-inline',
      probability: 1,
      times: 3,
      effect: { type: 'status', status: 429, retry_after: 1 },
    });
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { concurrency: 4 }));
    expect(r.summary.exit_code, r.stderr).toBe(0);
    expect([...(await ledgerTotals(server.url)).reservesBySha.values()]).toEqual([1, 1, 1, 1, 1, 1]);
    // Exactly three 429s (a drawn probability left no 429 at all about 1 run in 9), each Retry-After honoured (1 s, on the fake clock).
    expect(r.sleeps.filter((ms) => ms >= 1000).length).toBeGreaterThan(0);
  });
});

describe('--fresh', () => {
  it('with a rejected key (exit 4, nothing sent) changes nothing: the next plain run pays for nothing again', async ({
    sharedEngine,
  }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(3);
    const first = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(first.summary.completed).toBe(3);
    const before = replayJournal(readFileSync(join(cwd, '.extract-state.jsonl'), 'utf8')).known;

    const rejected = await run(
      cwd,
      ['in/'],
      batchOptions(server.url, 'ext_wrong_key_for_this_parser', { fresh: true }),
    );
    expect(rejected.summary.exit_code).toBe(4);
    const afterRejected = replayJournal(readFileSync(join(cwd, '.extract-state.jsonl'), 'utf8')).known;
    // Another key is another target: nothing the journal knew of the first key's documents changed.
    expect(afterRejected).toEqual(before);

    const plain = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(plain.summary.exit_code).toBe(0);
    expect(plain.summary.skipped).toBe(3);
    expect([...(await ledgerTotals(server.url)).reservesBySha.values()]).toEqual([1, 1, 1]);
  });

  it('against a service that is down sends nothing and forgets nothing', async ({ sharedEngine }) => {
    const server = await emulator(sharedEngine);
    const cwd = await invoiceDir(3);
    await run(cwd, ['in/'], batchOptions(server.url, KEY));
    const url = server.url;
    await server.close();
    servers.delete(server);
    // The same target (URL and key), down now.
    const fresh = await run(cwd, ['in/'], batchOptions(url, KEY, { fresh: true }));
    expect(fresh.summary.exit_code).toBe(7);
    const back = await emulator(sharedEngine, {}, Number(new URL(url).port));
    const plain = await run(cwd, ['in/'], batchOptions(back.url, KEY));
    expect(plain.summary.exit_code, plain.stderr).toBe(0);
    expect(plain.summary.skipped).toBe(3);
    expect((await ledgerTotals(back.url)).reservesBySha.size).toBe(0);
  });
});
