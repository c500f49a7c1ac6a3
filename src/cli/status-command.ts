import type { Command } from 'commander';
import { DEFAULT_STATE_WAIT_MS } from '../batch/options.ts';
import { durationFlag } from '../flags/units.ts';

/**
 * `extract status [--state FILE|URL] [--json]`: what a batch's journal says, from any
 * machine. The action only forwards to runStatus (src/commands/status.ts).
 */
export function registerStatus(program: Command): void {
  program
    .command('status')
    .description(
      'show a batch from its journal: documents by outcome, pages charged, each worker, the oldest still processing',
    )
    .option(
      '--state <file|url>',
      'the journal: a file, or the postgres:// URL the workers share (default: EXTRACT_STATE_URL, the config store, then the user journal of the configured service)',
    )
    .option('--json', 'print the view as JSON')
    .option('--failed', 'list the failed documents (file, document_id, when, why, what it may have cost)')
    .option('--needs-review', 'list the completed documents with null fields, and which fields')
    .option(
      '--state-wait <duration>',
      'how long to wait for an unreachable database (then exit 6)',
      durationFlag(DEFAULT_STATE_WAIT_MS),
    )
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
    .action(
      async (flags: {
        state?: string;
        json?: boolean;
        stateWait?: string;
        failed?: boolean;
        needsReview?: boolean;
      }) => {
        const { statusFromCli } = await import('./status-action.ts');
        process.exitCode = await statusFromCli(flags, process.env);
      },
    );
}
