import type { Command } from 'commander';
import { COMPACT_FLAGS } from '../flags/batch.ts';
import { addFlags } from '../flags/commander.ts';
import { parseFlags } from '../flags/parse.ts';

/**
 * `extract journal compact [--state FILE]`: keeps, per document, only the facts its replay needs
 * (src/journal/state/compact.ts). The action only forwards to journal-action.ts.
 */
export function registerJournal(program: Command): void {
  const journal = program.command('journal').description('Maintain the journal of sent documents');
  const compact = journal
    .command('compact')
    .description(
      'rewrite the journal keeping what each document needs (its latest state, its results): nothing is sent again, no result is lost',
    );
  addFlags(compact, COMPACT_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  extract journal compact
  extract journal compact --state ./.extract-state.jsonl

Exit codes: 0 compacted, 2 usage (no journal, a PostgreSQL journal, or a run is sending through it).
`,
    )
    .action(async (raw: Record<string, unknown>) => {
      const flags = parseFlags(COMPACT_FLAGS, raw);
      const { compactFromCli } = await import('./journal-action.ts');
      process.exitCode = await compactFromCli(flags, process.env);
    });
}
