import type { Log, LogLevel } from '../client/deps.ts';
import { ExtractError } from '../errors.ts';
import { inert } from '../inert.ts';
import type { Verbosity } from '../ui/progress.ts';

/** -q or -v (or neither), the same rule for every command. */
export function verbosityOf(flags: { quiet?: boolean | undefined; verbose?: boolean | undefined }): Verbosity {
  if (flags.quiet === true && flags.verbose === true)
    throw new ExtractError('usage', '-q and -v contradict each other: keep one');
  return flags.quiet === true ? 'quiet' : flags.verbose === true ? 'verbose' : 'normal';
}

/** The lowest level each verbosity prints: -q errors only, by default warnings too, -v everything (every request). */
const LOWEST: Record<Verbosity, number> = { quiet: 3, normal: 2, verbose: 0 };
const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** A command's log on stderr at a verbosity: one inert line each, prefixed as every line of ours. */
export function stderrLog(
  verbosity: Verbosity,
  write: (text: string) => unknown = (t) => process.stderr.write(t),
): Log {
  return (level, message) => {
    if (RANK[level] >= LOWEST[verbosity]) write(`extract: ${inert(message)}\n`);
  };
}
