import { type DryRunLine, dryRunText } from './dry-run-lines.ts';
import type { Log } from '../../client/deps.ts';
import { EXIT_CODES, ExtractError } from '../../errors.ts';
import {
  destinationOf,
  listTablePaths,
  writeDestination,
  writeOutputs,
  type DestinationOptions,
  type OutputTarget,
} from '../../outputs/index.ts';
import { errorRecord, notSubmittedRecord, pendingRecord } from '../../outputs/record.ts';
import { redact } from '../../redact.ts';
import type { BatchDeps, BatchOptions } from '../options.ts';
import type { Charges } from '../outcome.ts';
import { folderFor, moveInto } from './move.ts';
import { Containers, keptLine } from './move-parts.ts';
import { inert } from '../../inert.ts';
import { fetchable } from '../../cost/rerun.ts';
import type { Job, BatchPlan } from '../plan/index.ts';
import { unreadableKey, type RecordKey, type Records } from '../records.ts';
import type { Stopper } from '../send/index.ts';
import { exitCodeOf, reportChunks, reviewEntries, summaryLines, tallySummary, type BatchSummary } from '../summary.ts';

/**
 * The finish step of `runBatch`: the summary, the outputs and the report over every input, in
 * input order, whatever stopped the run; and the whole of a dry run, which plans and stops there.
 */

export type FinishContext = {
  options: BatchOptions;
  deps: BatchDeps;
  log: Log;
  records: Records;
  /** When the run started (deps.now()). */
  started: number;
};

/** The records of every input, in input order: unreadable ones first, as they were found. */
function inputOrder(plan: BatchPlan): Iterable<RecordKey> {
  return {
    *[Symbol.iterator]() {
      for (const u of plan.unreadable) yield unreadableKey(u.file);
      for (let i = 0; i < plan.jobs.count; i++) yield i;
    },
  };
}

export async function finishBatch(
  plan: BatchPlan,
  stopper: Stopper,
  charges: Charges,
  target: OutputTarget,
  ctx: FinishContext,
): Promise<BatchSummary> {
  const { options, deps, log } = ctx;
  const documents = ctx.records.inOrder(inputOrder(plan));
  const summary = tallySummary(documents, {
    stoppedBy: stopper.reason() ?? null,
    message: stopper.message(),
    elapsedMs: deps.now() - ctx.started,
    dryRun: false,
    charges,
    ignored: plan.ignored,
    linksNotFollowed: plan.linksNotFollowed,
    hidden: plan.hidden,
    unsettled: plan.unsettled,
    release: () => ctx.records.close(),
  });
  // Outputs and the report cover every input, in input order, whatever the stop. A FIFO's reader
  // is waited for only now, with every document done, and the next signal ends the wait.
  const written = _attempt(ctx);
  const io = (): Omit<DestinationOptions, 'what'> => ({
    stdout: deps.stdout,
    stderr: deps.stderr,
    signal: stopper.nextSignal(),
    wait: stopper.reason() !== 'interrupted',
  });
  // The writers take each record's own fields as they write it (recordFields): no copy of the batch first.
  // Except a base URL that is not the service: this run learned nothing, and the outputs of the
  // last good run (completed records) are left as they were rather than replaced by "not submitted".
  // A writer's warning about --explode waits for the exit code: it may be the reason for an exit 2,
  // and a reason is printed at any verbosity (-q shows errors only).
  const outputWarnings: string[] = [];
  if (summary.stopped_by === 'wrong_service') log('info', 'the outputs were left as they were');
  else
    await written(() =>
      writeOutputs(target, documents, {
        ...io(),
        cwd: deps.cwd,
        explode: options.explode,
        formulaProtection: !options.noFormulaProtection,
        // Said at once otherwise: "waiting for a reader" must reach a person while the run waits.
        warn: (m) => (m.startsWith('--explode') ? outputWarnings.push(m) : log('warn', m)),
      }),
    );
  // After a journal refusal some outcomes live only in memory until the journal is closed (rescue.ts):
  // a file moved away now could come back as new if they were then lost, so nothing moves this run.
  if (summary.stopped_by === 'journal' && (ctx.options.moveDone !== undefined || ctx.options.moveFailed !== undefined))
    ctx.log('warn', 'the journal refused a write: no file is moved this run; the next run moves them');
  else if (!written.failed() && summary.stopped_by !== 'wrong_service' && (await moveFinished(plan, ctx)))
    summary.exit_code = exitCodeOf(summary, true);
  if (written.failed()) {
    // A signal that ended the wait is the run's stop now; the exit code says the output is missing.
    summary.stopped_by = stopper.reason() ?? null;
    summary.message = stopper.message();
    summary.exit_code = exitCodeOf(summary, true);
  }
  // --explode naming no table of the results (a typo, an Object field) was warned about above: a
  // usage error, not a silent success. Results are in the journal: the corrected rerun costs nothing.
  if (options.explode !== undefined && summary.exit_code === EXIT_CODES.ok) {
    let completed = 0;
    const tables = listTablePaths({
      *[Symbol.iterator]() {
        for (const d of documents)
          if (d.status === 'completed') {
            completed++;
            yield d;
          }
      },
    });
    if (completed > 0 && !tables.includes(options.explode)) summary.exit_code = EXIT_CODES.usage;
  }
  const explodeFailed = options.explode !== undefined && summary.exit_code === EXIT_CODES.usage;
  for (const w of outputWarnings) log(explodeFailed && w.startsWith('--explode') ? 'error' : 'warn', w);
  await written(() => writeSideFile(options.report, 'the report', reportText(summary), deps.cwd, io()));
  if (summary.stopped_by !== 'wrong_service')
    await written(() => writeSideFile(options.review, 'the review list', reviewChunks(summary), deps.cwd, io()));
  if (written.failed()) summary.exit_code = exitCodeOf(summary, true);
  printSummary(summary, deps, options);
  if (deps.env.GITHUB_ACTIONS === 'true')
    await (await import('./github.ts')).reportToGithub(summary, deps.env, deps.stderr, deps.stdout, log);
  return summary;
}

/**
 * --move-done/--move-failed, once the outputs hold every record (the journal's facts were
 * fdatasync'd as each document ended): each file whose result is kept leaves the folder. Returns
 * whether a file could not be moved: it stays, its entry says why, and the run exits 8 (README:
 * Exit codes) like an output not written; the rerun moves it and pays nothing.
 */
async function moveFinished(plan: BatchPlan, ctx: FinishContext): Promise<boolean> {
  const folders = { done: ctx.options.moveDone, failed: ctx.options.moveFailed };
  if (folders.done === undefined && folders.failed === undefined) return false;
  const counts = new Map<string, number>();
  let failed = false;
  const containers = new Containers();
  for (const job of plan.jobs) {
    const entry = ctx.records.get(job.ordinal);
    const folder = entry && folderFor(entry, folders);
    if (job.input.part !== undefined) {
      containers.add(job.input.part, job.ordinal, entry, folder !== undefined && folder === folders.done);
      continue;
    }
    // A URL's bytes are the run's own copy: there is no file of the user's to move.
    if (entry === undefined || folder === undefined || job.input.remote === true) continue;
    // Only the file as it was read (sent, or known by its content): plan.readAtSend says where that is not the plan's.
    const read = plan.readAtSend?.get(job.ordinal) ?? job.read;
    const result = await moveInto(job.input.path, folder, job.input.rel ?? job.input.file, ctx.deps.cwd, read);
    if ('changed' in result) {
      ctx.log('warn', `${inert(job.input.file)}: ${result.changed}`);
      continue;
    }
    ctx.records.update(job.ordinal, Object.assign(entry, result));
    if ('move_error' in result) {
      failed = true;
      ctx.log('error', `${inert(job.input.file)}: ${result.move_error}`);
    } else counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  await containers.move(
    folders.done,
    ctx.deps.cwd,
    (part, result, entries) => {
      if ('changed' in result) return ctx.log('warn', `${inert(part.file)}: ${result.changed}`);
      for (const [ordinal, entry] of entries) ctx.records.update(ordinal, Object.assign(entry, result));
      if ('move_error' in result) {
        failed = true;
        ctx.log('error', `${inert(part.file)}: ${result.move_error}`);
      } else if (folders.done !== undefined) counts.set(folders.done, (counts.get(folders.done) ?? 0) + 1);
    },
    (part, notDone) => ctx.log('info', keptLine(part.file, notDone)),
  );
  for (const [folder, n] of counts) ctx.log('info', `moved ${n} file${n === 1 ? '' : 's'} to ${folder}`);
  return failed;
}

/**
 * Runs one write of the finish step; a write that fails (a full disk, a reader gone, a signal
 * while waiting for one) is said, with what to do, and the finish goes on: the report and the
 * summary still come, and the exit code says what is missing. Anything else is a bug, passed on.
 */
function _attempt(ctx: FinishContext): ((write: () => Promise<unknown>) => Promise<void>) & { failed(): boolean } {
  let failed = false;
  const next =
    ctx.options.state === null
      ? 'no journal was kept (--no-state): a rerun sends every file again'
      : 'every result is in the journal: rerun the same command, which pays nothing again';
  const attempt = async (write: () => Promise<unknown>): Promise<void> => {
    try {
      await write();
    } catch (err) {
      if (!(err instanceof ExtractError) || (err.code !== 'output' && err.code !== 'interrupted')) throw err;
      failed = true;
      ctx.log('error', `${err.message}; ${next}`);
    }
  };
  return Object.assign(attempt, { failed: () => failed });
}

/** --dry-run: one line per file with its route and pages, the credits it would cost; nothing sent. */
export async function finishDryRun(plan: BatchPlan, ctx: FinishContext): Promise<BatchSummary> {
  const { options, deps, records } = ctx;
  const lines = Array.from(plan.jobs, (job) => dryRunLine(job, records));
  const summary = tallySummary(records.inOrder(inputOrder(plan)), {
    stoppedBy: null,
    message: null,
    elapsedMs: deps.now() - ctx.started,
    dryRun: true,
    charges: { reserved: 0, refunded: 0, unknown: 0, recognised: 0 },
    ignored: plan.ignored,
    linksNotFollowed: plan.linksNotFollowed,
    hidden: plan.hidden,
    unsettled: plan.unsettled,
    release: () => ctx.records.close(),
  });
  deps.stdout.write(dryRunText(lines, summary.credits_estimate ?? 0));
  await writeSideFile(options.report, 'the report', reportText(summary), deps.cwd, {
    stdout: deps.stdout,
    stderr: deps.stderr,
  });
  printSummary(summary, deps, options);
  return summary;
}

/** The dry run's line for a job, and its record when the run would send or collect it. */
function dryRunLine(job: Job, records: Records): DryRunLine {
  // A part refused on this machine (a `../` member, a bomb) would fail unsent: no credit, the reason.
  if (job.action === 'submit' && job.input.refused !== undefined) {
    records.emit(job.ordinal, {
      ...errorRecord({ file: job.input.file, document_id: null, route: null }, job.input.refused),
      outcome: 'unreadable',
      sha256: job.sha256,
    });
    return { word: 'refuse', pages: undefined, file: job.input.file, why: job.input.refused };
  }
  if (job.action === 'submit') {
    records.emit(job.ordinal, {
      ...notSubmittedRecord({ file: job.input.file, route: job.decision.route }, null),
      outcome: 'planned',
      sha256: job.sha256,
      pages_estimate: job.pages,
    });
    return { word: job.decision.route, pages: job.pages ?? null, file: job.input.file, why: job.decision.why };
  }
  if (job.action === 'resume') {
    const submitted = fetchable(job.prior);
    records.emit(job.ordinal, {
      ...pendingRecord(
        { file: job.input.file, document_id: submitted?.document_id ?? null, route: submitted?.route ?? null },
        'charged earlier: this run would fetch it by its document_id',
        submitted?.page_count ?? null,
      ),
      outcome: 'pending',
      sha256: job.sha256,
    });
    const why = 'charged earlier: fetched by its document_id, not charged again';
    return { word: 'resume', pages: undefined, file: job.input.file, why };
  }
  const done = job.action === 'done';
  return {
    word: done ? 'skip' : 'leave',
    pages: undefined,
    file: job.input.file,
    why: done ? 'completed earlier' : 'failed earlier; --retry-failed sends it',
  };
}

/**
 * A run's side file (--report: the summary as JSON; --review: one JSON line per document with
 * null fields, empty when none has), or `-` for stdout (run.ts made sure only one stream is there).
 */
async function writeSideFile(
  path: string | undefined,
  what: 'the report' | 'the review list',
  chunks: () => Iterable<string>,
  cwd: string,
  io: Omit<DestinationOptions, 'what'>,
): Promise<void> {
  if (path === undefined) return;
  await writeDestination(destinationOf(path, cwd), redacted(chunks()), { ...io, what });
}

function* redacted(chunks: Iterable<string>): Generator<string> {
  for (const chunk of chunks) yield redact(chunk);
}

const reportText = (summary: BatchSummary) => () => reportChunks(summary);
const reviewChunks = (summary: BatchSummary) =>
  function* () {
    for (const e of reviewEntries(summary)) yield `${JSON.stringify(e)}\n`;
  };

function printSummary(summary: BatchSummary, deps: BatchDeps, options: BatchOptions): void {
  // -q prints only errors: the summary only when something needs attention.
  if (options.verbosity === 'quiet' && summary.exit_code === 0) return;
  for (const line of summaryLines(summary, options.state !== null))
    deps.stderr.write(`extract: ${inert(redact(line))}\n`);
}
