import type { Command } from 'commander';
import type { StopSignal } from '../batch/options.ts';
import type { Env } from '../config/settings.ts';

/** What a command's module is handed of the process, beside its arguments and flags. */
export type Cli = {
  /** The whole program: completion walks it, the batch command refuses a mistyped command's name. */
  program: Command;
  /** Whether `--<flag>` was typed on the command line rather than left to its default. */
  typed: (flag: string) => boolean;
  env: Env;
  cwd: string;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  signals: NodeJS.EventEmitter;
  onSignal: (handler: (signal: StopSignal) => void) => () => void;
  exitNow: (code: number) => void;
};

/** The process as `command` runs: the one place a command's module gets it from. */
export function cliOf(command: Command, parent: Command): Cli {
  let program = parent;
  while (program.parent !== null) program = program.parent;
  return {
    program,
    typed: (flag) => command.getOptionValueSource(flag) === 'cli',
    env: process.env,
    cwd: process.cwd(),
    // Getters: a stream of the process is made when first used (on a pipe it loads net and the streams).
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    signals: process,
    onSignal: subscribeSignals,
    exitNow: (code) => process.exit(code),
  };
}

function subscribeSignals(handler: (signal: StopSignal) => void): () => void {
  const onInt = (): void => handler('SIGINT');
  const onTerm = (): void => handler('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
}
