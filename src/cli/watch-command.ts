import type { Command } from 'commander';
import { durationFlag } from '../flags/units.ts';
import { DEFAULT_RESCAN_MS, DEFAULT_SETTLE_MS } from '../watch/defaults.ts';
import type { WatchFlags } from './watch-action.ts';
import { subscribeSignals } from './run-command.ts';

/**
 * The batch run's flags that mean the same for a watcher, taken from the root command as
 * registered (run-command.ts), so the two never drift apart. Left out: what has no end to
 * wait for (--report, --dry-run, --max-credits), what would pay twice across restarts
 * (--no-state, --fresh), and --retry-failed (a watcher sends a failed file again when it changes).
 */
const SHARED_FLAGS = [
  '--explode',
  '--route',
  '--inline-max',
  '--concurrency',
  '--max-pending',
  '--poll-interval',
  '--poll-max-interval',
  '--poll-timeout',
  '--state',
  '--lease',
  '--state-wait',
  '--all-files',
  '--follow-links',
  '--ignore',
  '--move-done',
  '--move-failed',
  '--quiet',
  '--verbose',
  '--api-key',
  '--base-url',
  '--local',
];

const HELP = `
Files are sent once their size and mtime have not changed for --settle; a file still open for
writing by a process of this machine waits. Records are appended as documents complete:
JSON Lines (-o - or FILE.jsonl), CSV (one header) or DIR/ (one JSON per document). One log
line per document on stderr. The journal is the batch run's: a watcher and a cron run of
extract on the same folder pay each document once, and a restart sends nothing twice.

Exit codes:
  0    stopped by SIGINT/SIGTERM (documents in flight are resumed by the next run)
  2    usage or configuration error (no such folder, -o FILE.json, no API key)
  4    the service rejected the API key
  6    the journal could not be used
  8    the output could not be written (results are in the journal: fix it and restart)
  9    another run holds the journal (a .jsonl --state file): stop it, or use another --state

Examples:
  extract watch ./inbox -o results.jsonl
  extract watch /srv/scans --settle 10s --rescan 5m --no-events -o /srv/results/
`;

/** `extract watch <folder...>`: the action forwards to runWatch (src/watch/watch.ts). */
export function registerWatch(program: Command): void {
  const watch = program
    .command('watch')
    .description('watch drop folders: send each new or changed file once it stops changing, until SIGINT/SIGTERM')
    .argument('<folders...>', 'folders to watch (with their subfolders)');
  for (const option of program.options)
    if (option.long !== undefined && SHARED_FLAGS.includes(option.long)) watch.addOption(option);
  watch
    .option(
      '-o, --out <path>',
      'where records are appended as documents complete: - (stdout, JSON Lines), FILE.jsonl, FILE.csv (one header) or DIR/ (one JSON per document)',
    )
    .option('--format <format>', 'jsonl, csv or dir; overrides the extension of -o')
    .option(
      '--settle <duration>',
      'send a file once its size and mtime are unchanged this long',
      durationFlag(DEFAULT_SETTLE_MS),
    )
    .option(
      '--rescan <duration>',
      'list every folder again this often: finds files whose events were lost (network shares)',
      durationFlag(DEFAULT_RESCAN_MS),
    )
    .option('--no-events', 'no file events: only the rescan finds files (NFS, SMB, some FUSE mounts)')
    .addHelpText('after', HELP)
    .action(async (folders: string[], flags: WatchFlags, command: Command) => {
      const { watchFromCli } = await import('./watch-action.ts');
      process.exitCode = await watchFromCli(folders, flags, {
        explicitState: command.getOptionValueSource('state') === 'cli',
        env: process.env,
        exitNow: (code) => process.exit(code),
        onSignal: (handler) => subscribeSignals(handler),
      });
    });
}
