import type { Command } from 'commander';

/**
 * `extract journal compact [--state FILE]`: keeps, per document, only the facts its replay needs
 * (src/journal/state/compact.ts). The action only forwards to journal-action.ts.
 */
export function registerJournal(program: Command): void {
  const journal = program.command('journal').description('Maintain the journal of sent documents');
  journal
    .command('compact')
    .description(
      'rewrite the journal keeping what each document needs (its latest state, its results): nothing is sent again, no result is lost',
    )
    .option(
      '--state <file>',
      'the journal file (JSON Lines, or SQLite: .sqlite, .db, sqlite:PATH; default: the user journal of the configured service)',
    )
    .option('--json', 'print what was done as JSON')
    .addHelpText(
      'after',
      `
Examples:
  extract journal compact
  extract journal compact --state ./.extract-state.jsonl

Exit codes: 0 compacted, 2 usage (no journal, a PostgreSQL journal, or a run is sending through it).
`,
    )
    .action(async (flags: { state?: string; json?: boolean }) => {
      const { compactFromCli } = await import('./journal-action.ts');
      process.exitCode = await compactFromCli(flags, process.env);
    });
}
