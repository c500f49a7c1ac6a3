import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_PENDING,
  DEFAULT_STATE_WAIT_MS,
} from '../../src/batch/options.ts';
import { DEFAULT_INLINE_MAX } from '../../src/batch/route.ts';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';
import { batchOptionsFromFlags } from '../../src/cli/flags.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { RUN_FLAGS, WATCH_FLAGS } from '../../src/flags/batch.ts';
import { parseFlags } from '../../src/flags/parse.ts';

/**
 * The batch run's options from its command line, as the root command's action builds them
 * (commander, then the table, then cli/flags.ts), without spawning a process: the defaults
 * come from the table once, and only the rules that join flags are the glue's.
 */
const TARGET = { baseUrl: 'https://extract.example.com', apiKey: 'ext_test' };

function optionsOf(args: string[], command?: 'watch') {
  const program = buildProgram();
  if (command === undefined) {
    program.parseOptions(args);
    return batchOptionsFromFlags(parseFlags(RUN_FLAGS, program.opts()), TARGET, undefined);
  }
  const watch = program.commands.find((c) => c.name() === command)!;
  watch.parseOptions(args);
  return batchOptionsFromFlags({ ...parseFlags(WATCH_FLAGS, watch.opts()), settle: undefined }, TARGET, undefined);
}

describe("cli: a batch run's options from its flags", () => {
  it('nothing typed: the defaults the pipeline documents', () => {
    expect(optionsOf([])).toEqual({
      ...TARGET,
      keySource: undefined,
      route: 'auto',
      inlineMax: DEFAULT_INLINE_MAX,
      concurrency: DEFAULT_CONCURRENCY,
      maxPending: DEFAULT_MAX_PENDING,
      poll: DEFAULT_POLL,
      state: undefined,
      leaseMs: DEFAULT_LEASE_MS,
      stateWaitMs: DEFAULT_STATE_WAIT_MS,
      fresh: false,
      allFiles: false,
      followLinks: false,
      retryFailed: false,
      dryRun: false,
      maxCredits: undefined,
      ignore: [],
      out: undefined,
      format: undefined,
      explode: undefined,
      report: undefined,
      review: undefined,
      moveDone: undefined,
      moveFailed: undefined,
      settleMs: 0,
      noProgress: false,
      verbosity: 'normal',
    });
  });

  it('a watcher that says nothing: the same options as a run that says nothing', () => {
    expect(optionsOf([], 'watch')).toEqual(optionsOf([]));
  });

  it('values as typed reach the options; -q and -v, and poll delays out of order, are usage errors', () => {
    const options = optionsOf(['-c', '2', '--poll-interval', '500ms', '--settle', '5', '-q', '--no-progress']);
    expect(options).toMatchObject({ concurrency: 2, settleMs: 5000, verbosity: 'quiet', noProgress: true });
    expect(options.poll).toEqual({ ...DEFAULT_POLL, intervalMs: 500 });
    expect(() => optionsOf(['-q', '-v'])).toThrow('-q and -v contradict each other: keep one');
    expect(() => optionsOf(['--poll-interval', '0'])).toThrow('--poll-interval must be more than 0');
    expect(() => optionsOf(['--poll-interval', '1m', '--poll-max-interval', '30s'])).toThrow(
      '--poll-max-interval must be at least --poll-interval',
    );
  });
});
