import type { Command } from 'commander';
import { STATUS_FLAGS } from '../flags/batch.ts';
import { addFlags } from '../flags/commander.ts';
import { parseFlags } from '../flags/parse.ts';

/**
 * `extract status [--state FILE|URL] [--json]`: what a batch's journal says, from any
 * machine. The action only forwards to runStatus (src/commands/status.ts).
 */
export function registerStatus(program: Command): void {
  const status = program
    .command('status')
    .description(
      'show a batch from its journal: documents by outcome, pages charged, each worker, the oldest still processing',
    );
  addFlags(status, STATUS_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  extract status --state "$EXTRACT_STATE_URL"
  extract status --state postgres://extract@db.internal/nightly --json | jq .workers
  extract status --needs-review --failed

Exit codes: 0 shown, 2 usage, 6 the database could not be used.
`,
    )
    .action(async (raw: Record<string, unknown>) => {
      const flags = parseFlags(STATUS_FLAGS, raw);
      const { statusFromCli } = await import('./status-action.ts');
      process.exitCode = await statusFromCli(flags, process.env);
    });
}
