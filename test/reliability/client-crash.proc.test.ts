import { statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { seededRandom } from '../../src/emulator/faults.ts';
import { extract } from '../e2e/batch-helpers.ts';
import { tempDir } from '../helpers/cli.ts';
import type { Fact } from '../helpers/journal.ts';
import { chargesBySha, count, makeCorpus, readJournalLines, readReport, serveConfig } from './helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Client crashes: one batch of 60 documents (both routes), the CLI killed with SIGKILL at 10
 * seeded random moments and resumed each time with --retry-failed, which sends what was in
 * flight at a kill again under the same Idempotency-Key (and may itself be killed). In the
 * end every document is completed and charged exactly once, and the journal is readable.
 */

const DOCS = 60;
const KILLS = 10;

const keyOf = (f: Fact): string | undefined =>
  typeof f.request === 'object' && f.request !== null && 'idempotency_key' in f.request
    ? String(f.request.idempotency_key)
    : undefined;

/** The extract requests in flight (a document's last fact is `sending`, no answer recorded), by content and key. */
function inFlight(facts: Fact[]): string[] {
  const last = new Map<string, Fact>();
  for (const f of facts) if (typeof f.sha256 === 'string') last.set(f.sha256, f);
  return [...last.values()].filter((f) => f.fact === 'sending').map((f) => `${f.sha256} ${keyOf(f)}`);
}

/** How many times each content and key was sent (`sending` facts): above 1, resent under its key. */
function sendsByKey(facts: Fact[]): Map<string, number> {
  const sends = new Map<string, number>();
  for (const f of facts)
    if (f.fact === 'sending' && keyOf(f) !== undefined) {
      const id = `${f.sha256} ${keyOf(f)}`;
      sends.set(id, (sends.get(id) ?? 0) + 1);
    }
  return sends;
}

describe('client crashes', () => {
  it(`SIGKILL at ${KILLS} random moments of one batch of ${DOCS}: all complete, each charged once, the journal readable`, async ({
    emulator,
  }) => {
    const root = tempDir('extract-kill-');
    const corpus = await makeCorpus(root, DOCS, 'kill');
    // Some engine time, so that kills land while inline requests and polls are in flight.
    // The service in this process: the client is what is killed (helpers/emulator.ts).
    const server = await emulator(serveConfig({ processing: { ms_per_page: 400, concurrency: 2 } }));
    const flags = [
      'in/',
      '--inline-max',
      String(corpus.inlineMax),
      '-c',
      '4',
      '--poll-interval',
      '50ms',
      '--poll-max-interval',
      '200ms',
      '--no-progress',
      '-q',
    ];
    const random = seededRandom(6);
    const journal = join(root, '.extract-state.jsonl');
    writeFileSync(journal, '', { mode: 0o600 });
    flags.push('--state', journal);

    const moments: number[] = [];
    let finishedEarly = 0;
    const cutOff = new Set<string>();
    for (let kill = 0; kill < KILLS; kill++) {
      for (const id of inFlight(readJournalLines(journal).facts)) cutOff.add(id);
      const written = statSync(journal).size;
      const run = extract(root, server.url, kill === 0 ? flags : [...flags, '--retry-failed']);
      // Kill somewhere in the first 1.5 s after the run's first journal line (it is sending by
      // then): timed from the start instead, a slow start-up on a loaded machine took the kills.
      const at = Math.round(random() * 1500);
      moments.push(at);
      let timer: NodeJS.Timeout | undefined;
      const watcher = watch(journal, () => {
        if (timer !== undefined || statSync(journal).size === written) return;
        timer = setTimeout(() => run.kill('SIGKILL'), at);
      });
      const result = await run;
      watcher.close();
      clearTimeout(timer);
      if (result.signal !== 'SIGKILL') finishedEarly++;
    }
    for (const id of inFlight(readJournalLines(journal).facts)) cutOff.add(id);

    const final = await extract(root, server.url, [...flags, '--retry-failed', '--report', 'report.json']);
    expect(final.exitCode, final.stderr).toBe(0);
    const report = readReport(join(root, 'report.json'));
    expect(report.documents).toHaveLength(DOCS);
    expect(report.documents.every((d) => d.outcome === 'completed' || d.outcome === 'skipped')).toBe(true);

    const { net, reserves } = await chargesBySha(server.url);
    expect(net.size).toBe(DOCS);
    for (const d of report.documents) {
      expect(net.get(d.sha256 ?? ''), d.file).toBe(1);
      // Not even a charge that was refunded later: the kills never made the service work twice.
      expect(reserves.get(d.sha256 ?? ''), d.file).toBe(1);
    }

    const { facts, torn } = readJournalLines(journal);
    expect(torn).toBeLessThanOrEqual(KILLS);
    expect(KILLS - finishedEarly, 'most kills must land while the batch runs').toBeGreaterThanOrEqual(KILLS / 2);
    expect(count(facts, (f) => f.fact === 'completed')).toBe(DOCS);
    // The kills cut requests in flight, and every one cut was sent again under the same key
    // (which is why the ledger above holds one reserve per document, not two).
    const sends = sendsByKey(facts);
    const resent = [...cutOff].filter((id) => (sends.get(id) ?? 0) >= 2).length;
    expect(cutOff.size, 'some kills must cut an extract request in flight').toBeGreaterThan(0);
    expect(
      [...cutOff].filter((id) => id.endsWith(' undefined')),
      'an uncertain request keeps its key',
    ).toEqual([]);
    expect(resent).toBe(cutOff.size);
    console.log(
      `client crashes: ${KILLS} SIGKILLs at ${moments.join(', ')} ms after each run's first journal line (${finishedEarly} runs finished before their kill); ` +
        `${cutOff.size} extract requests in flight at a kill, ${resent} resent under their Idempotency-Key; ` +
        `final run: ${report.completed} completed, ${report.skipped} skipped; ${facts.length} journal lines, ${torn} torn; ledger: ${net.size} documents, 1 reserve each`,
    );
  }, 120_000);
});
