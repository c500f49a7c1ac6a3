import { runGet } from '../commands/get.ts';
import { defaultClientDeps } from '../client/deps.ts';
import { ExtractError } from '../errors.ts';
import type { GetValues } from '../flags/batch.ts';
import type { Cli } from './cli-context.ts';
import { pollPolicyOf } from './flags.ts';
import { missingMarkerOf } from './stored-settings.ts';
import { withTarget } from './target.ts';
import { stderrLog, verbosityOf } from './verbosity.ts';

/** Glue between `extract get` and runGet: settings, process streams. */
export async function getFromCli([ids]: [string[]], flags: GetValues, cli: Cli): Promise<number> {
  const { env } = cli;
  const verbosity = verbosityOf(flags);
  return withTarget(flags, env, { needKey: true }, async (target) => {
    if (target.apiKey === undefined) throw new ExtractError('usage', 'no API key');
    const summary = await runGet(
      ids,
      {
        baseUrl: target.baseUrl,
        apiKey: target.apiKey,
        keySource: target.keySource,
        wait: flags.wait,
        poll: pollPolicyOf(flags),
        // --json: records on stdout as JSON Lines (it conflicts with -o).
        out: flags.json ? '-' : flags.out,
        format: flags.json ? 'jsonl' : flags.format,
        json: flags.json,
        explode: flags.explode,
        missingMarker: await missingMarkerOf(flags, env),
      },
      {
        ...defaultClientDeps({ log: stderrLog(verbosity) }),
        cwd: process.cwd(),
        stdout: process.stdout,
        stderr: process.stderr,
      },
    );
    return summary.exitCode;
  });
}
