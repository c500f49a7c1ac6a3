import type { Command } from 'commander';
import { WATCH_FLAGS } from '../flags/batch.ts';
import { addFlags } from '../flags/commander.ts';
import { parseFlags } from '../flags/parse.ts';
import { subscribeSignals } from './run-command.ts';

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
  addFlags(watch, WATCH_FLAGS)
    .addHelpText('after', HELP)
    .action(async (folders: string[], raw: Record<string, unknown>, command: Command) => {
      const flags = parseFlags(WATCH_FLAGS, raw);
      const { watchFromCli } = await import('./watch-action.ts');
      process.exitCode = await watchFromCli(folders, flags, {
        explicitState: command.getOptionValueSource('state') === 'cli',
        env: process.env,
        exitNow: (code) => process.exit(code),
        onSignal: (handler) => subscribeSignals(handler),
      });
    });
}
