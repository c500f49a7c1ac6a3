import { fstatSync, writeSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ExtractError, exitCodeFor, EXIT_CODES } from '../errors.ts';
import { VERSION, VERSION_LINE } from './version.ts';
import { inert } from '../inert.ts';
import { redact } from '../redact.ts';
import { registerCommands } from './commands.ts';
import { refuseMistypedCommand } from './mistyped.ts';
import { hideSqliteExperimentalWarning } from './warnings.ts';
import { keepRunningWhenLogsClose } from './log-streams.ts';
import type { ErrorEvent } from '../outputs/json-shapes.ts';

/**
 * The CLI layer: parses arguments, calls plain async command functions, and turns typed
 * errors into exit codes. It is the only place that calls process.exit. Each command's module is
 * behind its one door (commands.ts), so `--help` loads none of them.
 */
export function buildProgram(): Command {
  const program = new Command('extract')
    .description('Batch document extraction, and a local emulator of the extraction service')
    .version(VERSION_LINE, '-V, --version', 'print the version, runtime and platform')
    .showHelpAfterError('(run "extract --help" for usage)')
    // One prefix for every error, commander's own included ("error: ..." otherwise).
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'extract: ')) })
    .exitOverride()
    .hook('preAction', () => keepRunningWhenLogsClose([process.stderr, process.stdout]));
  program.configureOutput(helpOutput(program.configureOutput()));
  registerCommands(program, { version: VERSION, line: VERSION_LINE });
  return program;
}

type OutputConfiguration = ReturnType<Command['configureOutput']>;

/**
 * Help (and the version) written to a stdout that cannot be a terminal (a file, a pipe, a
 * socket) with write(2) on fd 1, without process.stdout: creating that stream loads net, the
 * stream machinery and the pipe's handle, a good part of what `extract --help | less` adds to
 * Node's start (bench row 5). A character device (a terminal, or /dev/null) keeps
 * commander's own output, its width and colours. Our help has no colours to strip.
 */
export function helpOutput(defaults: OutputConfiguration): OutputConfiguration {
  let plain: boolean | undefined;
  const notATerminal = () => {
    if (plain === undefined) {
      try {
        plain = !fstatSync(1).isCharacterDevice();
      } catch {
        plain = false;
      }
    }
    return plain;
  };
  return {
    writeOut: (text) => (notATerminal() ? writeStdout(text, defaults) : defaults.writeOut!(text)),
    // 80: commander's own width when stdout is not a terminal.
    getOutHelpWidth: () => (notATerminal() ? 80 : defaults.getOutHelpWidth!()),
    getOutHasColors: () => (notATerminal() ? false : defaults.getOutHasColors!()),
  };
}

/** Writes all of `text` to fd 1; a pipe that would block takes the rest through process.stdout, a closed one is left. */
function writeStdout(text: string, defaults: OutputConfiguration): void {
  let rest = Buffer.from(text);
  try {
    while (rest.length > 0) rest = rest.subarray(writeSync(1, rest));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') return;
    if (code !== 'EAGAIN') throw err;
    defaults.writeOut!(rest.toString());
  }
}

export async function runMain(argv: string[]): Promise<void> {
  hideSqliteExperimentalWarning();
  const program = buildProgram();
  try {
    // A first word that is no command but close to one ("sevre"): said before its flags are refused.
    const first = argv[2];
    if (first !== undefined && !first.startsWith('-') && !program.commands.some((c) => c.name() === first))
      refuseMistypedCommand(first, program);
    await program.parseAsync(argv);
    if (process.exitCode === undefined) process.exitCode = EXIT_CODES.ok;
  } catch (err) {
    process.exit(reportError(err, wantsJson(argv.slice(2))));
  }
}

/** Whether the command line asks for JSON (`--json` before any `--`): an error is then one JSON line on stdout too. */
function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).includes('--json');
}

/**
 * Prints an error people can act on, and returns the exit code. Never prints a secret. With
 * --json, the same error is also one line on stdout (docs/json.md), for the script reading it.
 */
function reportError(err: unknown, json: boolean): number {
  const said = sayError(err);
  if (json && said.exitCode !== 0) {
    const event: ErrorEvent = {
      event: 'error',
      error: { code: said.code, message: said.message, exit_code: said.exitCode },
    };
    process.stdout.write(`${JSON.stringify(event)}\n`);
  }
  return said.exitCode;
}

function sayError(err: unknown): { code: string; message: string; exitCode: number } {
  if (err instanceof CommanderError) {
    // commander has printed its own message (or the help/version text) already.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0)
      return { code: 'ok', message: '', exitCode: 0 };
    return { code: 'usage', message: inert(redact(err.message.replace(/^error: /, ''))), exitCode: EXIT_CODES.usage };
  }
  if (err instanceof ExtractError) {
    process.stderr.write(`extract: ${lines(err.message)}\n`);
    return { code: err.code, message: lines(err.message), exitCode: exitCodeFor(err.code) };
  }
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(
    `extract: unexpected error; please report it with the lines below (they contain no API key)\n${lines(redact(detail))}\n`,
  );
  const first = err instanceof Error ? err.message : String(err);
  return { code: 'internal', message: `unexpected error: ${inert(redact(first))}`, exitCode: EXIT_CODES.failed };
}

/**
 * A message's own lines kept (a stack, a config's list of problems), each made inert: a file name
 * or the service's words quoted in it cannot repaint the terminal or hide a runner command.
 */
function lines(message: string): string {
  return message
    .split('\n')
    .map((line) => inert(line))
    .join('\n');
}
