import type { BatchDeps, StopSignal } from '../batch/options.ts';
import { runBatch } from '../batch/run.ts';
import { defaultClientDeps } from '../client/deps.ts';
import type { Env } from '../config/settings.ts';
import type { RunValues } from '../flags/batch.ts';
import { batchOptionsFromFlags } from './flags.ts';
import { favourMemory } from './heap.ts';
import { missingMarkerOf } from './missing-marker.ts';
import { passwordFileOf } from './password-file.ts';
import { batchSecretNotes } from './secret-flags.ts';
import { withTarget } from './target.ts';
import { VERSION } from './version.ts';

export type CliHooks = {
  /** Whether --state was typed (with --local the journal is off unless it was). */
  explicitState: boolean;
  env: Env;
  exitNow: (code: number) => void;
  onSignal: (handler: (signal: StopSignal) => void) => () => void;
};

/** Glue between the root command and runBatch: settings or --local, process streams, signals. */
export async function runBatchFromCli(inputs: string[], flags: RunValues, hooks: CliHooks): Promise<number> {
  for (const note of batchSecretNotes(flags, inputs)) process.stderr.write(`${note}\n`);
  return withTarget(
    flags,
    hooks.env,
    { needKey: flags.dryRun !== true, lookUpState: !hooks.explicitState },
    async (target) => {
      // --state (a path, a URL or --no-state) wins; then EXTRACT_STATE_URL and the config
      // store; then the user's journal of the service (journal/state/user-journal.ts). A --local emulator lives for one run:
      // its documents cannot be resumed, so it keeps no journal unless --state says so.
      const state = hooks.explicitState ? (flags.noState ? null : flags.state) : target.local ? null : target.stateUrl;
      const options = {
        ...batchOptionsFromFlags(flags, target, state),
        missingMarker: await missingMarkerOf(flags, hooks.env),
        passwordFile: await passwordFileOf(flags, hooks.env),
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
        env: { ...hooks.env },
        stdin: process.stdin,
        // --json: stdout holds the events alone; records streamed there and a dry run's plan are in them.
        stdout: events?.stdout ?? process.stdout,
        ...(events !== undefined && { onRecord: events.record }),
        stderr: process.stderr,
        // A terminal of zero width (script(1), some CI runners' pseudo-terminals) cannot hold a
        // bar: ora's line clearing would loop forever, so it gets plain lines.
        isTTY: process.stderr.isTTY === true && (process.stderr.columns ?? 0) > 0,
        onSignal: hooks.onSignal,
        exitNow: hooks.exitNow,
        // Once the run reads or sends a document: the collector's extra passes would cost a rerun that
        // does neither a good part of its CPU, for a heap it frees at exit anyway.
        favourMemory,
      };
      events?.started('extract', VERSION, inputs, new Date());
      const summary = await runBatch(inputs, options, deps);
      events?.summary(summary);
      return summary.exit_code;
    },
  );
}
