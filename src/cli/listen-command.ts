import { CONNECTION_DEFAULTS } from '../net/connection-defaults.ts';
import type { Command } from 'commander';
import { RECEIVER_DEFAULTS } from '../receiver/options.ts';
import type { ListenFlags } from './listen-action.ts';

/** The inbox of `extract listen`: beside the work, so a restart in the same place keeps deduplicating. */
export const DEFAULT_INBOX_DIR = './.extract-inbox';

/** `extract listen`: the webhook receiver (README: extract listen). The action only forwards. */
export function registerListen(program: Command): void {
  program
    .command('listen')
    .description(
      'receive document.processed webhooks: authenticate, store durably, answer at once, deduplicate, write records',
    )
    .option(
      '--host <host>',
      'address to bind; anything but loopback is reachable from the network',
      RECEIVER_DEFAULTS.host,
    )
    .option('--port <port>', 'port to listen on (0 picks a free one)', String(RECEIVER_DEFAULTS.port))
    .option('--path <path>', 'path events are accepted on (POST or PUT)', RECEIVER_DEFAULTS.path)
    .option('--auth <type>', 'none, bearer or basic (default: from the credentials given, else none)')
    .option('--token <token>', 'bearer token; prefer EXTRACT_LISTEN_TOKEN, flags are visible in ps')
    .option('--user <user>', 'basic authentication user name')
    .option('--password <password>', 'basic authentication password; prefer EXTRACT_LISTEN_PASSWORD')
    .option('--data-dir <dir>', 'inbox (deduplication across restarts) and review.jsonl', DEFAULT_INBOX_DIR)
    .option('-o, --out <path>', 'where records go: - (stdout, JSON Lines), FILE.jsonl, FILE.json, FILE.csv, DIR/')
    .option('--format <format>', 'json, jsonl, csv or dir; overrides the extension of -o')
    .option('--max-body <bytes>', 'bodies larger than this are answered 413', String(RECEIVER_DEFAULTS.maxBodyBytes))
    .option(
      '--max-connections <n>',
      'connections open at once; past it the one idle longest is closed, or a new one gets 503 when all are busy',
      String(CONNECTION_DEFAULTS.maxConnections),
    )
    .option('--json', 'log lines (stderr) as NDJSON')
    .addHelpText(
      'after',
      '\nEnvironment: EXTRACT_LISTEN_TOKEN (bearer token), EXTRACT_LISTEN_PASSWORD (basic password).\n' +
        'It says "Listening on <url>" on stderr ({"type":"listening","url":...} with --json); without -o,\n' +
        'stdout holds only the records, as JSON Lines (extract listen | jq -c .).\n' +
        'Exit codes: 0 stopped by SIGINT/SIGTERM, 2 usage, 9 another extract listen holds the --data-dir.\n',
    )
    .action(async (flags: ListenFlags) => {
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
