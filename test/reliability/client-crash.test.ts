import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/emulator/faults.ts';
import { extract } from '../e2e/batch-helpers.ts';
import { spawnServe, tempDir } from '../helpers/cli.ts';
import { chargesBySha, count, makeCorpus, readJournalLines, readReport, writeServeConfig } from './helpers.ts';

/**
 * Client crashes: one batch of 60 documents (both routes), the CLI killed with SIGKILL at 10
 * seeded random moments and resumed each time with --retry-failed, which sends what was in
 * flight at a kill again under the same Idempotency-Key (and may itself be killed). In the
 * end every document is completed and charged exactly once, and the journal is readable.
 */

const DOCS = 60;
const KILLS = 10;

/** Documents whose last journal fact is an extract request in flight (no answer recorded). */
function inFlight(facts: Array<Record<string, unknown>>): number {
  const last = new Map<string, string>();
  for (const f of facts) if (typeof f.sha256 === 'string') last.set(f.sha256, String(f.fact));
  return count([...last.values()], (fact) => fact === 'sending');
}

describe('client crashes', () => {
  it(`SIGKILL at ${KILLS} random moments of one batch of ${DOCS}: all complete, each charged once, the journal readable`, async () => {
    const root = tempDir('extract-kill-');
    const corpus = await makeCorpus(root, DOCS, 'kill');
    // Some engine time, so that kills land while inline requests and polls are in flight.
    const server = await spawnServe([
      '--in-memory',
      '--config',
      writeServeConfig(root, { processing: { ms_per_page: 400, concurrency: 2 } }),
      '-q',
    ]);
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

    const moments: number[] = [];
    let finishedEarly = 0;
    let resent = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      const before = readJournalLines(journal);
      resent += inFlight(before.facts);
      const run = extract(root, server.url, kill === 0 ? flags : [...flags, '--retry-failed']);
      // Node start-up and planning take a few hundred ms; kill somewhere after that.
      const at = Math.round(500 + random() * 1500);
      moments.push(at);
      const timer = setTimeout(() => run.kill('SIGKILL'), at);
      const result = await run;
      clearTimeout(timer);
      if (result.signal !== 'SIGKILL') finishedEarly++;
    }
    resent += inFlight(readJournalLines(journal).facts);

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
    console.log(
      `client crashes: ${KILLS} SIGKILLs at ${moments.join(', ')} ms (${finishedEarly} runs finished before their kill); ` +
        `${resent} extract requests in flight at a kill, resent under their Idempotency-Key; ` +
        `final run: ${report.completed} completed, ${report.skipped} skipped; ${facts.length} journal lines, ${torn} torn; ledger: ${net.size} documents, 1 reserve each`,
    );
  }, 120_000);
});
