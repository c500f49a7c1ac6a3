import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { parseJournal } from '../../src/journal/journal-read.ts';
import type { JournalFact } from '../../src/journal/journal.ts';
import { compactJournal } from '../../src/journal/state/compact.ts';
import { openState, parseStateSpec } from '../../src/journal/state/index.ts';
import { CLI, cleanEnv, tempDir } from '../helpers/cli.ts';
import { KEY } from '../helpers/emulator.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from '../batch/harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * `extract journal compact` keeps the guarantees: after it, a rerun sends nothing
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
    it(`${state}: fewer facts and bytes; the rerun sends nothing and writes every record`, async ({ emulator }) => {
      const server = await emulator({ idempotency_key: false });
      const cwd = await invoiceDir(6);
      const options = batchOptions(server.url, KEY, { route: 'inline', state, out: 'out.jsonl' });
      // Two runs: three documents, then all six (three known, three new).
      const first = await run(cwd, ['in/doc-00.pdf', 'in/doc-01.pdf', 'in/doc-02.pdf'], options);
      expect(first.summary.exit_code, first.stderr).toBe(0);
      const second = await run(cwd, ['in/'], options);
      expect(second.summary.exit_code, second.stderr).toBe(0);
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
      expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
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

  it('the command: what it did, on stdout; a PostgreSQL journal or no journal: exit 2', async () => {
    const dir = tempDir('journal-compact-cli-');
    const journal = join(dir, 'j.jsonl');
    const fact = (i: number, kind: 'sending' | 'completed'): JournalFact =>
      kind === 'sending'
        ? {
            fact: 'sending',
            at: `2026-01-01T00:00:0${i}.000Z`,
            sha256: `s${i}`,
            target: 't',
            file: `f${i}.pdf`,
            route: 'inline',
          }
        : {
            fact: 'completed',
            at: `2026-01-01T00:00:0${i}.500Z`,
            sha256: `s${i}`,
            target: 't',
            file: `f${i}.pdf`,
            route: 'inline',
            document_id: `d${i}`,
            page_count: 1,
            results: { total: i },
          };
    writeFileSync(
      journal,
      [0, 1, 2]
        .flatMap((i) => [fact(i, 'sending'), fact(i, 'completed')])
        .map((f) => `${JSON.stringify(f)}\n`)
        .join(''),
    );
    const ok = await execa(process.execPath, [CLI, 'journal', 'compact', '--state', journal, '--json'], {
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
    });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ journal, documents: 3, facts_before: 6, facts_after: 4 });
    expect(parseJournal(readFileSync(journal, 'utf8')).facts.map((f) => f.fact)).toEqual([
      'journal',
      'completed',
      'completed',
      'completed',
    ]);
    const text = await execa(process.execPath, [CLI, 'journal', 'compact', '--state', journal], {
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
    });
    expect(text.stdout).toMatch(
      /^compacted .*j\.jsonl: 3 documents, 4 facts -> 4, \d+ bytes -> \d+ \(\d+ -> \d+ bytes a document\)$/,
    );
    for (const state of ['postgres://u:secret@localhost/x', join(dir, 'none.sqlite')]) {
      const refused = await execa(process.execPath, [CLI, 'journal', 'compact', '--state', state], {
        env: cleanEnv(),
        extendEnv: false,
        reject: false,
      });
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr).toMatch(/^extract: /);
      expect(refused.stderr).not.toContain('secret');
    }
  }, 120_000);

  it('a SQLite journal a run is sending through (it holds claims) is left as it is', async () => {
    const path = join(tempDir('journal-compact-busy-'), 'j.sqlite');
    const state = await openState({ kind: 'sqlite', path }, { readOnly: false, leaseMs: 30_000, log: () => {} });
    try {
      expect(await state.claim(['t:s1'], 1)).toHaveLength(1);
      await expect(compactJournal({ kind: 'sqlite', path }, { log: () => {} })).rejects.toThrow(/is in use/);
    } finally {
      await state.close();
    }
    // Released at its close: now it may be compacted.
    await expect(compactJournal({ kind: 'sqlite', path }, { log: () => {} })).resolves.toMatchObject({ documents: 0 });
  });
});
