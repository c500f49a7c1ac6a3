import { checkApiKey, keyFingerprint } from '../config/settings.ts';
import { ExtractError } from '../errors.ts';
import {
  checkExplode,
  checkSharedStdout,
  createStreamWriter,
  isStreamed,
  prepareOutput,
  resolveOutput,
} from '../outputs/index.ts';
import { errorRecord } from '../outputs/record.ts';
import type { Log } from '../client/deps.ts';
import { discoverInputs } from './discover.ts';
import { finishBatch, finishDryRun } from './finish.ts';
import type { Replay } from './journal.ts';
import type { Charges } from './pipeline.ts';
import { HASH_WHILE_SENDING_ABOVE, type BatchDeps, type BatchOptions } from './options.ts';
import { countPages } from './pages.ts';
import { planJobs, priorRecord, type BatchPlan } from './plan.ts';
import { chooseStyle, createReporter, useColor, type Reporter } from './progress.ts';
import { createRecords, unreadableKey, type Records } from './records.ts';
import { memoryState, openState, parseStateSpec, type StateJournal } from './state/index.ts';
import { openStatCache, statCachePathFor, type StatCache } from './state/stat-cache.ts';
import { createStopper } from './stopper.ts';
import type { BatchSummary } from './summary.ts';

/**
 * `extract [options] <inputs...>`: discovers the inputs, plans each file against the
 * journal, sends what is new, collects what earlier runs submitted, and writes one record
 * per input. Returns the summary; the CLI layer turns its exitCode into the process's.
 *
 * Three steps: plan (below: inputs, journal, what to do with each file), send (send.ts) and
 * finish (finish.ts: outputs, report, summary). A dry run plans and finishes.
 */
export async function runBatch(inputs: string[], options: BatchOptions, deps: BatchDeps): Promise<BatchSummary> {
  const started = deps.now();
  if (!options.dryRun) requireKey(options.apiKey);
  // Decide the output before paying for anything: a typo in -o costs nothing.
  const target = resolveOutput({ out: options.out, format: options.format, cwd: deps.cwd });
  checkExplode(target, options.explode);
  checkSharedStdout(target, options.report, options.dryRun, deps.cwd);
  if (!options.dryRun) await prepareOutput(target);

  const reporter = await createReporter({
    stderr: deps.stderr,
    style: chooseStyle(deps.isTTY, deps.env, options.noProgress),
    verbosity: options.verbosity,
    color: useColor(deps.isTTY, deps.env),
    now: deps.now,
  });
  const log: Log = reporter.log.bind(reporter);
  let journal: StateJournal | undefined;
  let unsubscribe: (() => void) | undefined;
  try {
    const records = createRecords(!options.dryRun && isStreamed(target) ? createStreamWriter(deps.stdout) : undefined);
    const plan = await planBatch(inputs, options, deps, {
      reporter,
      log,
      records,
      opened: (j) => {
        journal = j;
      },
    });
    const finishing = { options, deps, log, records, started };
    if (options.dryRun) {
      reporter.stop();
      return await finishDryRun(plan, finishing);
    }
    const stopper = createStopper(options, deps, log, reporter);
    unsubscribe = stopper.listen();
    let charges = NOTHING_CHARGED;
    if (needsService(plan)) {
      const { sendBatch } = await import('./send.ts');
      charges = await sendBatch(plan, { options, deps, log, reporter, records, stopper });
    } else reporter.start(0);
    reporter.stop();
    return await finishBatch(plan, stopper, charges, target, finishing);
  } finally {
    unsubscribe?.();
    reporter.stop();
    await journal?.close();
  }
}

const NOTHING_CHARGED: Charges = { reserved: 0, refunded: 0, unknown: 0 };

/**
 * Whether the send step has anything to do: a document to submit or to collect, or (with a
 * shared journal) one left at the replay whose claim decides. A rerun that finds every file
 * done writes its records without loading the HTTP client.
 */
function needsService(plan: BatchPlan): boolean {
  return plan.jobs.some(
    (j) => j.action === 'submit' || j.action === 'resume' || (plan.journal.shared && j.action === 'leave'),
  );
}

type PlanContext = {
  reporter: Reporter;
  log: Log;
  records: Records;
  /** Called as soon as the journal is open, so that the run closes it whatever happens next. */
  opened: (journal: StateJournal) => void;
};

/**
 * The plan step: finds the inputs, opens the journal, decides for each file (send, resume,
 * skip, leave) and emits the records of files this run will not touch.
 */
async function planBatch(
  inputs: string[],
  options: BatchOptions,
  deps: BatchDeps,
  ctx: PlanContext,
): Promise<BatchPlan> {
  const { reporter, log, records } = ctx;
  reporter.planning('finding input files');
  const discovery = await discoverInputs(inputs, { cwd: deps.cwd, ignore: options.ignore, stdin: deps.stdin });
  for (const p of discovery.unmatched) log('warn', `${p}: matched no file`);
  log('info', `found ${discovery.files.length} file${discovery.files.length === 1 ? '' : 's'}`);

  const spec = options.state === null ? null : parseStateSpec(options.state, deps.cwd);
  if (spec?.kind === 'postgres' && options.fresh) {
    throw new ExtractError(
      'usage',
      "--fresh with a shared journal (postgres://) would make the workers redo and pay again for each other's documents: use a new database for a new batch",
    );
  }
  const journal =
    spec === null
      ? memoryState()
      : await openState(spec, {
          readOnly: options.dryRun,
          leaseMs: options.leaseMs,
          outageMs: options.stateWaitMs,
          log,
          lock: deps.lock,
        });
  ctx.opened(journal);
  let replay: Replay = { known: new Map(), skipped: 0, torn: false };
  // --fresh reads the journal too: it sends every file again, but what the journal knows of a
  // document changes only when this run actually sends it (a run that sends nothing changes nothing).
  if (spec !== null) replay = await journal.replay();
  if (replay.skipped > 0)
    log(
      replay.skipped === 1 && replay.torn ? 'debug' : 'warn',
      `${journal.where}: ignored ${replay.skipped} unreadable line${replay.skipped === 1 ? '' : 's'} (a torn last line after a crash is expected)`,
    );
  if (journal.shared && !options.dryRun)
    log('info', `sharing the batch through ${journal.where} as worker ${journal.worker}`);

  // A dry run without a key matches nothing in the journal: it plans every file as new.
  const targetId = options.apiKey ? keyFingerprint(options.apiKey, options.baseUrl) : 'no-key';
  // The stat cache sits beside a JSONL journal; a dry run reads it but writes nothing.
  const cache = spec?.kind === 'file' ? openStatCache(statCachePathFor(spec.path)) : undefined;
  const plan = await planJobs({
    files: discovery.files,
    known: replay.known,
    target: targetId,
    route: options.route,
    inlineMax: options.inlineMax,
    retryFailed: options.retryFailed,
    fresh: options.fresh,
    allFiles: options.allFiles,
    cache,
    now: deps.now,
    // One read pass for large files (hashed as they are uploaded): not for a page count first, nor
    // with a shared journal, whose workers claim a document by its content before sending it.
    hashWhileSendingAbove:
      options.dryRun || options.maxCredits !== undefined || journal.shared
        ? undefined
        : (options.hashWhileSendingAbove ?? HASH_WHILE_SENDING_ABOVE),
    onProgress: (done, total) => reporter.planning(`reading ${done}/${total} files`),
  });
  if (!options.dryRun) saveStatCache(cache, log);
  const unreadable = [...discovery.unreadable, ...plan.unreadable];
  const { ignored, jobs } = plan;
  if (ignored.length > 0) {
    const names = ignored.slice(0, 5).map((x) => `${x.file} (${x.mimeType})`);
    const more = ignored.length > 5 ? ` and ${ignored.length - 5} more (see --report)` : '';
    log(
      'info',
      `skipped ${ignored.length} file${ignored.length === 1 ? '' : 's'} that ${ignored.length === 1 ? 'is' : 'are'} not a PDF or an image, uncharged: ${names.join(', ')}${more}; --all-files sends them`,
    );
  }

  if (options.dryRun || options.maxCredits !== undefined) {
    for (const [i, job] of jobs.entries()) {
      if (job.action !== 'submit') continue;
      reporter.planning(`counting pages ${i + 1}/${jobs.length}`);
      job.pages = (await countPages(job.input.path, job.mimeType)) ?? undefined;
    }
  }

  for (const u of unreadable) {
    log('error', u.reason);
    records.emit(unreadableKey(u.file), {
      ...errorRecord({ file: u.file, document_id: null, route: null }, u.reason),
      outcome: 'unreadable',
      sha256: null,
    });
  }
  for (const job of jobs) {
    const prior = priorRecord(job);
    // With a shared journal, a document left at the replay (a send in flight) may belong to a
    // live worker: the claim decides (in the send step). A completed one is final either way.
    // The record is made for this entry: completed with what the entry adds, not copied.
    if (prior && (job.action === 'done' || (job.action === 'leave' && (!journal.shared || options.dryRun))))
      records.emit(
        job.input.realPath,
        Object.assign(prior, {
          outcome: job.action === 'done' ? ('skipped' as const) : ('left' as const),
          sha256: job.sha256,
        }),
      );
  }
  return { journal, known: replay.known, targetId, jobs, unreadable, ignored };
}

/** A cache: failing to write it costs the next run some reading, not this run its result. */
function saveStatCache(cache: StatCache | undefined, log: Log): void {
  try {
    cache?.save();
  } catch (err) {
    log('debug', `the stat cache was not saved: ${err instanceof Error ? err.message : String(err)}`);
  }
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
