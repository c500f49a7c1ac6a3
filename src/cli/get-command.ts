import type { Command } from 'commander';
import { GET_FLAGS } from '../flags/batch.ts';
import { addFlags } from '../flags/commander.ts';
import { parseFlags } from '../flags/parse.ts';

/** `extract get <document_id...> [--wait]`: stored documents as records. The action only forwards. */
export function registerGet(program: Command): void {
  const get = program
    .command('get')
    .description('fetch stored documents by id and print them as records (JSON Lines by default)')
    .argument('<document_id...>', 'ids returned by an earlier run (see its records or --report)');
  addFlags(get, GET_FLAGS)
    .showHelpAfterError('(run "extract get --help" for usage)')
    .addHelpText(
      'after',
      '\nExit codes: 0 all completed, 1 some failed or unknown, 2 usage, 4 key rejected, 5 still processing.\n',
    )
    .action(async (ids: string[], raw: Record<string, unknown>) => {
      const flags = parseFlags(GET_FLAGS, raw);
      const { getFromCli } = await import('./get-action.ts');
      process.exitCode = await getFromCli(ids, flags, process.env);
    });
}
