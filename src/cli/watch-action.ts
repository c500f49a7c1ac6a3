import type { BatchDeps } from '../batch/options.ts';
import { defaultClientDeps } from '../client/deps.ts';
import { runWatch } from '../watch/watch.ts';
import type { WatchValues } from '../flags/batch.ts';
import { watchOptionsFromFlags } from './flags.ts';
import type { Cli } from './cli-context.ts';
import { favourMemory } from './heap.ts';
import { eventsOnStdout } from './json-output.ts';
import { missingMarkerOf, passwordFileOf } from './stored-settings.ts';
import { batchSecretNotes } from './secret-flags.ts';
import { withTarget } from './target.ts';
import { VERSION } from './version.ts';

/** Glue between `extract watch` and runWatch: settings or --local, process streams, signals. */
export async function watchFromCli([folders]: [string[]], flags: WatchValues, cli: Cli): Promise<number> {
  const explicitState = cli.typed('state');
  for (const note of batchSecretNotes(flags)) process.stderr.write(`${note}\n`);
  return withTarget(flags, cli.env, { needKey: true, lookUpState: !explicitState }, async (target) => {
    // As a batch run: --state, then EXTRACT_STATE_URL and the config store, then the user's journal.
    const state = explicitState ? flags.state : target.local ? null : target.stateUrl;
    const options = watchOptionsFromFlags(flags, target, state);
    options.batch.missingMarker = await missingMarkerOf(flags, cli.env);
    options.batch.passwordFile = await passwordFileOf(flags, cli.env);
    const events = flags.json ? eventsOnStdout([['-o', flags.out]]) : undefined;
    const deps: BatchDeps = {
      ...defaultClientDeps(),
      cwd: process.cwd(),
      env: { ...cli.env },
      // --json: stdout holds the events alone; records appended there without -o are in them.
      stdout: events?.stdout ?? process.stdout,
      ...(events !== undefined && { onRecord: events.record }),
      stderr: process.stderr,
      isTTY: false,
      onSignal: cli.onSignal,
      exitNow: cli.exitNow,
    };
    favourMemory();
    events?.started('extract watch', VERSION, folders, new Date());
    const code = await runWatch(folders, options, deps);
    events?.stopped(code);
    return code;
  });
}
