import type { Command } from 'commander';
import { addFlags } from '../flags/commander.ts';
import { parseFlags } from '../flags/parse.ts';
import { LISTEN_FLAGS } from '../flags/servers.ts';

/** `extract listen`: the webhook receiver (README: extract listen). The action only forwards. */
export function registerListen(program: Command): void {
  const listen = program
    .command('listen')
    .description(
      'receive document.processed webhooks: authenticate, store durably, answer at once, deduplicate, write records',
    );
  addFlags(listen, LISTEN_FLAGS)
    .addHelpText(
      'after',
      '\nEnvironment: EXTRACT_LISTEN_TOKEN (bearer token), EXTRACT_LISTEN_PASSWORD (basic password).\n' +
        'It says "Listening on <url>" on stderr ({"type":"listening","url":...} with --json); without -o,\n' +
        'stdout holds only the records, as JSON Lines (extract listen | jq -c .).\n' +
        'Exit codes: 0 stopped by SIGINT/SIGTERM, 2 usage, 9 another extract listen holds the --data-dir.\n',
    )
    .action(async (raw: Record<string, unknown>) => {
      const flags = parseFlags(LISTEN_FLAGS, raw);
      const { listen } = await import('./listen-action.ts');
      await listen(flags, {
        stdout: process.stdout,
        stderr: process.stderr,
        signals: process,
        env: process.env,
        cwd: process.cwd(),
      });
    });
}
