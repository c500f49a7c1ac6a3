import { describe, expect, it } from 'vitest';
import { JOINED_FLAGS } from '../../src/batch/options.ts';
import { batchOptionsFromFlags, watchOptionsFromFlags } from '../../src/cli/flags.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { RUN_FLAGS, WATCH_FLAGS } from '../../src/flags/batch.ts';
import { parseFlags } from '../../src/flags/parse.ts';

/**
 * The batch run's options from its command line, as the root command's action builds them
 * (commander, then the table, then cli/flags.ts), without spawning a process: the defaults
 * come from the table once, and only the rules that join flags are the glue's. The defaults
 * are written here as literals, so a changed default fails a test (a constant shared with the
 * table would change with it).
 */
const TARGET = { baseUrl: 'https://extract.example.com', apiKey: 'ext_test' };

function optionsOf(args: string[]) {
  const program = buildProgram();
  program.parseOptions(args);
  return batchOptionsFromFlags(parseFlags(RUN_FLAGS, program.opts()), TARGET, undefined);
}

/** As watch-action.ts builds them. */
function watchOptionsOf(args: string[]) {
  const watch = buildProgram().commands.find((c) => c.name() === 'watch')!;
  watch.parseOptions(args);
  return watchOptionsFromFlags(parseFlags(WATCH_FLAGS, watch.opts()), TARGET, undefined);
}

describe("cli: a batch run's options from its flags", () => {
  it('nothing typed: the defaults the pipeline documents', () => {
    expect(optionsOf([])).toEqual({
      ...TARGET,
      keySource: undefined,
      route: 'auto',
      inlineMax: 3_300_000,
      concurrency: 4,
      maxPending: 64,
      poll: { intervalMs: 2000, factor: 1.5, maxIntervalMs: 30_000, timeoutMs: 15 * 60_000 },
      state: undefined,
      lease: 30_000,
      stateWait: 60_000,
      fresh: false,
      allFiles: false,
      followLinks: false,
      hidden: false,
      noFormulaProtection: false,
      retryFailed: false,
      dryRun: false,
      maxCredits: undefined,
      ignore: [],
      header: [],
      pages: undefined,
      split: undefined,
      passwordFile: undefined,
      out: undefined,
      format: undefined,
      explode: undefined,
      report: undefined,
      review: undefined,
      moveDone: undefined,
      moveFailed: undefined,
      settle: 0,
      noProgress: false,
      verbosity: 'normal',
      color: 'auto',
    });
  });

  it("a watcher that says nothing: the same batch as a run that says nothing; its --settle is the settle rule's", () => {
    expect(watchOptionsOf([])).toEqual({ batch: optionsOf([]), settle: 3000, rescan: 60_000, noEvents: false });
    const typed = watchOptionsOf(['--settle', '10s', '--rescan', '5m', '--no-events']);
    expect(typed).toEqual({ batch: optionsOf([]), settle: 10_000, rescan: 300_000, noEvents: true });
  });

  it('values as typed reach the options; -q and -v, and poll delays out of order, are usage errors', () => {
    const options = optionsOf(['-c', '2', '--poll-interval', '500ms', '--settle', '5', '-q', '--no-progress']);
    expect(options).toMatchObject({ concurrency: 2, settle: 5000, verbosity: 'quiet', noProgress: true });
    expect(optionsOf(['--hidden', '--no-formula-protection'])).toMatchObject({
      hidden: true,
      noFormulaProtection: true,
    });
    expect(options.poll).toEqual({ intervalMs: 500, factor: 1.5, maxIntervalMs: 30_000, timeoutMs: 15 * 60_000 });
    expect(() => optionsOf(['-q', '-v'])).toThrow('-q and -v contradict each other: keep one');
    expect(() => optionsOf(['--poll-interval', '0'])).toThrow('--poll-interval must be more than 0');
    expect(() => optionsOf(['--poll-interval', '1m', '--poll-max-interval', '30s'])).toThrow(
      '--poll-max-interval must be at least --poll-interval',
    );
  });

  it("every flag of the run's table reaches the run under its own name and value, unless a rule joins it", () => {
    // A value typed for each flag, as the table parses it: a new flag needs no line here.
    const typed = parseFlags(RUN_FLAGS, {});
    const joined = new Set<string>(JOINED_FLAGS);
    const options: Record<string, unknown> = batchOptionsFromFlags(
      { ...typed, lease: 45_000, stateWait: 5000, noFormulaProtection: true, explode: 'lines', settle: 2000 },
      TARGET,
      undefined,
    );
    const flags = Object.keys(RUN_FLAGS).filter((k) => !joined.has(k));
    expect(flags).toEqual(expect.arrayContaining(['lease', 'stateWait', 'noFormulaProtection', 'explode', 'settle']));
    for (const k of flags) expect(options, k).toHaveProperty(k);
    expect(options).toMatchObject({
      lease: 45_000,
      stateWait: 5000,
      noFormulaProtection: true,
      explode: 'lines',
      settle: 2000,
    });
    // What is left is the joins' and the run's own: nothing else, so no flag reaches it renamed.
    const rest = Object.keys(options).filter((k) => !flags.includes(k));
    expect(rest.sort()).toEqual(['apiKey', 'baseUrl', 'keySource', 'poll', 'state', 'verbosity']);
    // Each joined flag is a real flag of the table, so the list cannot name one that went away.
    for (const k of JOINED_FLAGS) expect(RUN_FLAGS, k).toHaveProperty(k);
  });
});
