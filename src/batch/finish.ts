import { resolve } from 'node:path';
import type { Log } from '../client/deps.ts';
import { EXIT_CODES } from '../errors.ts';
import { listTablePaths, writeFileAtomic, writeOutputs, type OutputTarget } from '../outputs/index.ts';
import { notSubmittedRecord, pendingRecord } from '../outputs/record.ts';
import { redact } from '../redact.ts';
import type { BatchDeps, BatchOptions } from './options.ts';
import type { Charges } from './pipeline.ts';
import type { BatchPlan, Job } from './plan.ts';
import { unreadableKey, type Records } from './records.ts';
import type { Stopper } from './stopper.ts';
import { summaryLines, tallySummary, type BatchSummary } from './summary.ts';

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
function inputOrder(plan: BatchPlan): string[] {
  return [...plan.unreadable.map((u) => unreadableKey(u.file)), ...plan.jobs.map((j) => j.input.realPath)];
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
  });
  // Outputs and the report cover every input, in input order, whatever the stop; except a base
  // URL that is not the service: this run learned nothing, and the outputs of the last good
  // run (completed records) are left as they were rather than replaced by "not submitted".
  // The writers take each record's own fields as they write it (recordFields): no copy of the batch first.
  if (summary.stopped_by === 'wrong_service') log('info', 'the outputs were left as they were');
  else
    await writeOutputs(target, documents, {
      cwd: deps.cwd,
      explode: options.explode,
      stdout: deps.stdout,
      warn: (m) => log('warn', m),
    });
  // --explode naming no table of the results (a typo, an Object field) was warned about above: a
  // usage error, not a silent success. Results are in the journal: the corrected rerun costs nothing.
  if (options.explode !== undefined && summary.exitCode === EXIT_CODES.ok) {
    const completed = documents.filter((d) => d.status === 'completed');
    if (completed.length > 0 && !listTablePaths(completed).includes(options.explode))
      summary.exitCode = EXIT_CODES.usage;
  }
  await writeReport(options.report, summary, deps.cwd);
  printSummary(summary, deps, options);
  return summary;
}

/** --dry-run: one line per file with its route and pages, the credits it would cost; nothing sent. */
export async function finishDryRun(plan: BatchPlan, ctx: FinishContext): Promise<BatchSummary> {
  const { options, deps, records } = ctx;
  const lines = plan.jobs.map((job) => dryRunLine(job, records));
  const summary = tallySummary(records.inOrder(inputOrder(plan)), {
    stoppedBy: null,
    message: null,
    elapsedMs: deps.now() - ctx.started,
    dryRun: true,
    charges: { reserved: 0, refunded: 0, unknown: 0 },
    ignored: plan.ignored,
    linksNotFollowed: plan.linksNotFollowed,
  });
  deps.stdout.write(
    `${lines.join('\n')}\n${'total'.padEnd(8)}${String(summary.credits_estimate).padStart(6)} credits\n`,
  );
  await writeReport(options.report, summary, deps.cwd);
  printSummary(summary, deps, options);
  return summary;
}

/** The dry run's line for a job, and its record when the run would send or collect it. */
function dryRunLine(job: Job, records: Records): string {
  if (job.action === 'submit') {
    records.emit(job.input.realPath, {
      ...notSubmittedRecord({ file: job.input.file, route: job.decision.route }, null),
      outcome: 'planned',
      sha256: job.sha256,
      pages_estimate: job.pages,
    });
    return `${job.decision.route.padEnd(8)}${String(job.pages ?? '?').padStart(6)} pages  ${job.input.file}  (${job.decision.why})`;
  }
  if (job.action === 'resume') {
    const submitted = job.prior?.fact === 'submitted' ? job.prior : undefined;
    records.emit(job.input.realPath, {
      ...pendingRecord(
        { file: job.input.file, document_id: submitted?.document_id ?? null, route: submitted?.route ?? null },
        'submitted earlier: this run would collect it',
        submitted?.page_count ?? null,
      ),
      outcome: 'pending',
      sha256: job.sha256,
    });
    return `${'resume'.padEnd(8)}${'-'.padStart(6)}        ${job.input.file}  (submitted earlier, not charged again)`;
  }
  return `${(job.action === 'done' ? 'skip' : 'leave').padEnd(8)}${'-'.padStart(6)}        ${job.input.file}  (${job.action === 'done' ? 'completed earlier' : 'failed earlier; --retry-failed sends it'})`;
}

async function writeReport(path: string | undefined, summary: BatchSummary, cwd: string): Promise<void> {
  if (path === undefined) return;
  await writeFileAtomic(resolve(cwd, path), [redact(`${JSON.stringify(summary, null, 2)}\n`)]);
}

function printSummary(summary: BatchSummary, deps: BatchDeps, options: BatchOptions): void {
  // -q prints only errors: the summary only when something needs attention.
  if (options.verbosity === 'quiet' && summary.exitCode === 0) return;
  for (const line of summaryLines(summary, options.state !== null)) deps.stderr.write(`extract: ${redact(line)}\n`);
}
