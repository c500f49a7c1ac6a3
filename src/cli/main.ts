import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { ExtractError, exitCodeFor, EXIT_CODES } from '../errors.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { redact } from '../redact.ts';
import { registerServe } from './serve-command.ts';
import { registerConfig } from './config-command.ts';
import { registerRun } from './run-command.ts';
import { registerGet } from './get-command.ts';
import { registerListen } from './listen-command.ts';
import { registerStatus } from './status-command.ts';
import { registerJournal } from './journal-command.ts';
import { registerWatch } from './watch-command.ts';
import { hideSqliteExperimentalWarning } from './warnings.ts';

/**
 * The CLI layer: parses arguments, calls plain async command functions, and turns typed
 * errors into exit codes. It is the only place that calls process.exit. Heavy modules are
 * imported inside actions so `extract --version` starts fast.
 */
export function buildProgram(): Command {
  const program = new Command('extract')
    .description('Batch document extraction, and a local emulator of the extraction service')
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(run "extract --help" for usage)')
    // One prefix for every error, commander's own included ("error: ..." otherwise).
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'extract: ')) })
    .exitOverride();
  registerServe(program);
  registerConfig(program);
  registerRun(program);
  registerGet(program);
  registerListen(program);
  registerStatus(program);
  registerJournal(program);
  // After registerRun: watch takes the batch run's flags from the root command.
  registerWatch(program);
  return program;
}

/** The package's version, read from package.json. */
export const VERSION: string = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')).version;

export async function runMain(argv: string[]): Promise<void> {
  hideSqliteExperimentalWarning();
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    if (process.exitCode === undefined) process.exitCode = EXIT_CODES.ok;
  } catch (err) {
    process.exit(reportError(err));
  }
}

/** Prints an error people can act on, and returns the exit code. Never prints a secret. */
function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // commander has printed its own message (or the help/version text) already.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0;
    return EXIT_CODES.usage;
  }
  if (err instanceof ExtractError) {
    process.stderr.write(`extract: ${err.message}\n`);
    return exitCodeFor(err.code);
  }
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(
    `extract: unexpected error; please report it with the lines below (they contain no API key)\n${redact(detail)}\n`,
  );
  return EXIT_CODES.failed;
}
