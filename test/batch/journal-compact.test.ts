import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compactJournal } from '../../src/batch/state/compact.ts';
import { parseStateSpec } from '../../src/batch/state/index.ts';
import { emulator, KEY } from '../helpers/emulator.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from './harness.ts';

/**
 * `extract journal compact` keeps the guarantees (issue 26): after it, a rerun sends nothing
 * (the emulator ignores Idempotency-Key here, so a resend would show in the ledger) and writes
 * every record, with the results the first run got.
 */

function records(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('extract journal compact', () => {
  for (const state of ['journal.jsonl', 'journal.sqlite']) {
    it(`${state}: fewer facts and bytes; the rerun sends nothing and writes every record`, async () => {
      const server = await emulator({ idempotency_key: false });
      const cwd = await invoiceDir(6);
      const options = batchOptions(server.url, KEY, { route: 'inline', state, out: 'out.jsonl' });
      // Two runs: three documents, then all six (three known, three new).
      const first = await run(cwd, ['in/doc-00.pdf', 'in/doc-01.pdf', 'in/doc-02.pdf'], options);
      expect(first.summary.exitCode, first.stderr).toBe(0);
      const second = await run(cwd, ['in/'], options);
      expect(second.summary.exitCode, second.stderr).toBe(0);
      expect((await ledgerTotals(server.url)).net).toBe(6);
      const written = records(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
      expect(written.map((r) => r.status)).toEqual(Array(6).fill('completed'));

      const done = await compactJournal(parseStateSpec(state, cwd), { log: () => {} });
      expect(done.documents).toBe(6);
      expect(done.factsAfter).toBeLessThan(done.factsBefore);
      // Per document: its completion (the JSONL file also keeps its version line).
      expect(done.factsAfter).toBeLessThanOrEqual(7);
      expect(done.bytesAfter).toBeLessThanOrEqual(done.bytesBefore);

      const rerun = await run(cwd, ['in/'], options);
      expect(rerun.summary.exitCode, rerun.stderr).toBe(0);
      expect(rerun.summary.skipped).toBe(6);
      const ledger = await ledgerTotals(server.url);
      expect(ledger.net).toBe(6);
      expect([...ledger.reservesBySha.values()]).toEqual([1, 1, 1, 1, 1, 1]);
      const again = records(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
      expect(again.map((r) => [r.file, r.document_id, r.results])).toEqual(
        written.map((r) => [r.file, r.document_id, r.results]),
      );

      // Compacting a compacted journal changes nothing a run reads.
      const twice = await compactJournal(parseStateSpec(state, cwd), { log: () => {} });
      expect(twice.documents).toBe(6);
      expect(twice.factsAfter).toBe(done.factsAfter);
    }, 120_000);
  }
});
