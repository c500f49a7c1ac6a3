import type { BatchDeps } from '../batch/options.ts';
import { runBatch } from '../batch/run.ts';
import { defaultClientDeps } from '../client/deps.ts';
import { EXIT_CODES } from '../errors.ts';
import type { RunValues } from '../flags/batch.ts';
import type { Cli } from './cli-context.ts';
import { batchOptionsFromFlags } from './flags.ts';
import { favourMemory } from './heap.ts';
import { missingMarkerOf, passwordFileOf } from './stored-settings.ts';
import { refuseMistypedCommand } from './mistyped.ts';
import { batchSecretNotes } from './secret-flags.ts';
import { withTarget } from './target.ts';
import { SHORT_USAGE } from './topics.ts';
import { VERSION } from './version.ts';

/**
 * The batch command, `extract [options] <inputs...>`: settings or --local, process streams,
 * signals, then runBatch. A rerun that finds every file done goes no further than what this
 * module imports: the start-up rules of `npm run depcheck` (.dependency-cruiser.startup.cjs,
 * NO_OP_RERUN) hold it to no npm package.
 */
export async function runBatchFromCli([inputs]: [string[]], flags: RunValues, cli: Cli): Promise<number> {
  if (inputs.length === 0) {
    cli.stderr.write(SHORT_USAGE);
    return EXIT_CODES.usage;
  }
  refuseMistypedCommand(inputs[0]!, cli.program);
  // With --local the journal is off unless --state was typed.
  const explicitState = cli.typed('state');
  for (const note of batchSecretNotes(flags, inputs)) process.stderr.write(`${note}\n`);
  return withTarget(flags, cli.env, { needKey: flags.dryRun !== true, lookUpState: !explicitState }, async (target) => {
    // --state (a path, a URL or --no-state) wins; then EXTRACT_STATE_URL and the config
    // store; then the user's journal of the service (journal/state/user-journal.ts). A --local emulator lives for one run:
    // its documents cannot be resumed, so it keeps no journal unless --state says so.
    const state = explicitState ? (flags.noState ? null : flags.state) : target.local ? null : target.stateUrl;
    const options = {
      ...batchOptionsFromFlags(flags, target, state),
      missingMarker: await missingMarkerOf(flags, cli.env),
      passwordFile: await passwordFileOf(flags, cli.env),
    };
    const events = flags.json
      ? (await import('./json-output.ts')).eventsOnStdout([
          ['--report', flags.report],
          ['--review', flags.review],
          ['-o', flags.out],
        ])
      : undefined;
    const deps: BatchDeps = {
      ...defaultClientDeps(),
      cwd: process.cwd(),
      env: { ...cli.env },
      stdin: process.stdin,
      // --json: stdout holds the events alone; records streamed there and a dry run's plan are in them.
      stdout: events?.stdout ?? process.stdout,
      ...(events !== undefined && { onRecord: events.record }),
      stderr: process.stderr,
      // A terminal of zero width (script(1), some CI runners' pseudo-terminals) cannot hold a
      // bar: ora's line clearing would loop forever, so it gets plain lines.
      isTTY: process.stderr.isTTY === true && (process.stderr.columns ?? 0) > 0,
      onSignal: cli.onSignal,
      exitNow: cli.exitNow,
      // Once the run reads or sends a document: the collector's extra passes would cost a rerun that
      // does neither a good part of its CPU, for a heap it frees at exit anyway.
      favourMemory,
    };
    events?.started('extract', VERSION, inputs, new Date());
    const summary = await runBatch(inputs, options, deps);
    events?.summary(summary);
    return summary.exit_code;
  });
}
