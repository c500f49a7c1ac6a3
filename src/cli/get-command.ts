import type { Command } from 'commander';
import { durationFlag } from '../flags/units.ts';
import { DEFAULT_POLL } from '../client/backoff.ts';
import type { GetCliFlags } from './get-action.ts';

/** `extract get <document_id...> [--wait]`: stored documents as records. The action only forwards. */
export function registerGet(program: Command): void {
  program
    .command('get')
    .description('fetch stored documents by id and print them as records (JSON Lines by default)')
    .argument('<document_id...>', 'ids returned by an earlier run (see its records or --report)')
    .option('--wait', 'poll documents still processing until they complete or fail')
    .option('-o, --out <path>', 'where records go: - (stdout), FILE.json, FILE.jsonl, FILE.csv, DIR/')
    .option('--format <format>', 'json, jsonl, csv or dir; overrides the extension of -o')
    .option('--explode <field>', 'CSV: one row per row of this Table field', (v: string, p: string[]) => [...p, v], [])
    .option(
      '--poll-interval <duration>',
      'first delay between polls with --wait',
      durationFlag(DEFAULT_POLL.intervalMs),
    )
    .option('--poll-max-interval <duration>', 'longest delay between polls', durationFlag(DEFAULT_POLL.maxIntervalMs))
    .option(
      '--poll-timeout <duration>',
      'give up waiting after this long (exit 5)',
      durationFlag(DEFAULT_POLL.timeoutMs),
    )
    .option('--api-key <key>', 'API key (ext_...); prefer EXTRACT_API_KEY')
    .option('--base-url <url>', 'base URL of the service')
    .showHelpAfterError('(run "extract get --help" for usage)')
    .addHelpText(
      'after',
      '\nExit codes: 0 all completed, 1 some failed or unknown, 2 usage, 4 key rejected, 5 still processing.\n',
    )
    .action(async (ids: string[], flags: GetCliFlags) => {
      const { getFromCli } = await import('./get-action.ts');
      process.exitCode = await getFromCli(ids, flags, process.env);
    });
}
