import { randomUUID } from 'node:crypto';
import type { Log } from '../client/deps.ts';
import { checkApiKey } from '../config/settings.ts';
import { ExtractError } from '../errors.ts';
import { openRunJournal, type RunJournal } from '../journal/run-journal.ts';
import type { StateJournal } from '../journal/state/index.ts';
import {
  checkExplode,
  checkSharedStdout,
  createStreamWriter,
  isStreamed,
  prepareOutput,
  resolveOutput,
} from '../outputs/index.ts';
import { chooseStyle, colorLevel, createReporter } from '../ui/progress.ts';
import { findInputs } from './discover/index.ts';
import { finishBatch, finishDryRun, checkMoveFolders } from './finish/index.ts';
import { phaseOptions, type BatchDeps, type BatchOptions } from './options.ts';
import { PLAN_WINDOW, planBatch, queued, type BatchPlan, type PlanStore } from './plan/index.ts';
import { createRecords } from './records.ts';
import type { Charges } from './outcome.ts';
import { createStopper } from './send/index.ts';
import { type BatchSummary, neverAnswered } from './summary.ts';

/**
 * `extract [options] <inputs...>`: discovers the inputs, plans each file against the
 * journal, sends what is new, collects what earlier runs submitted, and writes one record
 * per input. Returns the summary; the CLI layer turns its exit_code into the process's.
 *
 * Five steps, each a folder: discover (discover/: the input files, a window at a time), the
 * run's journal (journal/run-journal.ts), plan (plan/: what to do with each file), send (send/)
 * and finish (finish/: outputs, report, summary). A dry run plans and finishes.
 */
export async function runBatch(inputs: string[], options: BatchOptions, given: BatchDeps): Promise<BatchSummary> {
  // Under GitHub Actions the runner reads stdout for commands: the records there are fenced (runner-fence.ts).
  const deps =
    given.env.GITHUB_ACTIONS === 'true'
      ? { ...given, stdout: (await import('./finish/runner-fence.ts')).fencedStdout(given.stdout, randomUUID()) }
      : given;
  const started = deps.now();
  if (!options.dryRun) requireKey(options.apiKey);
  // Discovery and the journal take only their own part of the options.
  const phase = phaseOptions(options);
  // Decide the output before paying for anything: a typo in -o costs nothing.
  const target = resolveOutput({ out: options.out, format: options.format, cwd: deps.cwd });
  checkExplode(target, options.explode);
  checkSharedStdout(target, options.report, options.dryRun, deps.cwd, [{ flag: '--review', path: options.review }]);
  await checkMoveFolders({ done: options.moveDone, failed: options.moveFailed }, deps.cwd);
  if (!options.dryRun) await prepareOutput(target);

  const reporter = await createReporter({
    stderr: deps.stderr,
    style: chooseStyle(deps.isTTY, deps.env, options.noProgress),
    verbosity: options.verbosity,
    color: colorLevel(options.color ?? 'auto', deps.isTTY, deps.env),
    now: deps.now,
  });
  const log: Log = reporter.log.bind(reporter);
  let journal: StateJournal | undefined;
  // The user's journal of this service, when this run makes it, goes again if the service never answers.
  let opened: RunJournal | undefined;
  let summary: BatchSummary | undefined;
  let jobs: PlanStore | undefined;
  let unsubscribe: (() => void) | undefined;
  let release: (() => void) | undefined;
  const records = createRecords(
    !options.dryRun && isStreamed(target) ? createStreamWriter(deps.stdout) : undefined,
    deps.onRecord,
    undefined,
    options.missingMarker,
  );
  try {
    // A journal that refuses a write stops the run; the stopper exists once the plan is made, and
    // a refusal while planning (a parser fact) is held for it.
    let failedWhilePlanning: string | undefined;
    let journalFailed = (message: string): void => {
      failedWhilePlanning ??= message;
    };
    reporter.planning('finding input files');
    const window = deps.planWindow ?? PLAN_WINDOW;
    const found = await findInputs(inputs, phase.discover, deps, window);
    release = found.release;
    opened = await openRunJournal(phase.journal, {
      ...deps,
      log,
      opened: (j) => {
        journal = j;
      },
      writeFailed: (message) => journalFailed(message),
    });
    const plan = await planBatch(found, opened, options, deps, { reporter, log, records });
    jobs = plan.jobs;
    const finishing = { options, deps, log, records, started };
    if (options.dryRun) {
      reporter.stop();
      return await finishDryRun(plan, finishing);
    }
    const stopper = createStopper(options, deps, log, reporter);
    journalFailed = (message) => stopper.stop('journal', message);
    if (failedWhilePlanning !== undefined) journalFailed(failedWhilePlanning);
    unsubscribe = stopper.listen();
    let charges = NOTHING_CHARGED;
    if (needsService(plan)) {
      deps.favourMemory?.();
      const { sendBatch } = await import('./send/send.ts');
      charges = await sendBatch(plan, { options, deps, log, reporter, records, stopper });
    } else log('info', nothingToSend(plan));
    reporter.stop();
    summary = await finishBatch(plan, stopper, charges, target, finishing);
    return summary;
  } catch (err) {
    // No summary to read them: the records' spool goes now (a summary releases its own).
    records.close();
    throw err;
  } finally {
    unsubscribe?.();
    jobs?.close();
    release?.();
    reporter.stop();
    // A fence left open would keep the runner deaf to the rest of the step (a dry run, a throw).
    if (deps.stdout !== given.stdout) await (await import('./finish/runner-fence.ts')).closeFence(deps.stdout);
    await journal?.close().catch((err: unknown) => {
      // The summary is lost with the throw: so are the records it would have read.
      records.close();
      throw err;
    });
    if (summary !== undefined && neverAnswered(summary)) await opened?.discardMade();
  }
}

const NOTHING_CHARGED: Charges = { reserved: 0, refunded: 0, unknown: 0, recognised: 0 };

/**
 * Whether the send step has anything to do: a document to submit or to collect, or (with a
 * shared journal) one left at the replay whose claim decides. A rerun that finds every file
 * done writes its records without loading the HTTP client.
 */
function needsService(plan: BatchPlan): boolean {
  return queued(plan.queue) > 0;
}

/**
 * A rerun with nothing queued says why, instead of a bar of 0/0 documents: every job it planned
 * was settled by an earlier run (completed, or set aside); the summary says which. Counted, not
 * read: such a rerun keeps most jobs off disk (PlanStore.skip).
 */
function nothingToSend(plan: BatchPlan): string {
  const n = plan.jobs.count;
  return n === 0 ? 'nothing to send' : `nothing to send: ${n} file${n === 1 ? '' : 's'} done earlier`;
}

function requireKey(apiKey: string | undefined): void {
  if (apiKey === undefined || apiKey === '') {
    throw new ExtractError(
      'usage',
      'no API key: pass --api-key, set EXTRACT_API_KEY, run "extract config set api_key -", or try --local',
    );
  }
  checkApiKey(apiKey, 'the options');
}
