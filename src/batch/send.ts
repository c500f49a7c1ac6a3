import { Circuit } from '../client/circuit.ts';
import type { Log } from '../client/deps.ts';
import { ServiceClient } from '../client/service-client.ts';
import { errorRecord } from '../outputs/record.ts';
import { workThrough } from './claims.ts';
import { Limiter } from './limiter.ts';
import type { BatchDeps, BatchOptions } from './options.ts';
import { Pipeline, type Charges, type Outcome } from './pipeline.ts';
import { priorRecord, type BatchPlan, type Job } from './plan.ts';
import { failsAgain, setAsideEarlier } from '../cost/rerun.ts';
import type { Finish, Reporter, Tally } from '../ui/progress.ts';
import type { Records } from './records.ts';
import type { Stopper } from './stopper.ts';
import type { EntryOutcome } from './summary.ts';

/**
 * The send step of `runBatch`: the documents of the plan that need work go through the
 * pipeline, each record emitted the moment its document ends. Loaded only by a run that has
 * something to send or collect: a rerun that finds everything done never loads the HTTP client.
 */

export type SendContext = {
  options: BatchOptions;
  deps: BatchDeps;
  log: Log;
  reporter: Reporter;
  records: Records;
  stopper: Stopper;
};

/** Sends what is new, collects what earlier runs submitted; returns what the service charged. */
export async function sendBatch(plan: BatchPlan, ctx: SendContext): Promise<Charges> {
  const { options, deps, log, reporter, records, stopper } = ctx;
  const { journal } = plan;

  // Two inputs with the same content are one document: sent once, recorded under each name.
  const copies = new Map<string, Job[]>();
  const leaders: Job[] = [];
  for (const job of plan.jobs) {
    const same = copies.get(job.key);
    if (same) same.push(job);
    else {
      copies.set(job.key, [job]);
      leaders.push(job);
    }
  }
  const emitCopies = (job: Job, entry: (copy: Job) => Parameters<Records['emit']>[1]): void => {
    for (const copy of copies.get(job.key) ?? [job]) records.emit(copy.input.realPath, entry(copy));
  };
  const toSend = leaders.filter((j) => j.action === 'submit');
  const toResume = leaders.filter((j) => j.action === 'resume');
  const toCheck = journal.shared ? leaders.filter((j) => j.action === 'leave') : [];
  const tally: Tally = { total: toSend.length + toResume.length + toCheck.length, done: 0, failed: 0, pages: 0 };

  const sendSlots = new Limiter(options.concurrency, { now: deps.now });
  const client = new ServiceClient(
    {
      baseUrl: options.baseUrl,
      apiKey: options.apiKey ?? '',
      hooks: { rateLimited: () => sendSlots.rateLimited(), succeeded: () => sendSlots.succeeded() },
      circuit: new Circuit(deps.now, deps.circuit),
    },
    { ...deps, log },
  );
  const settle = (job: Job, outcome: Outcome): void => {
    // Taken over by another worker (this one held it past its lease): nothing was sent from here; it is waited for.
    if (journal.lost(job.key)) return;
    // A file the run never sent did not finish: the bar counts only what did; the stop line says why.
    if (outcome.kind !== 'not_submitted') tally.done++;
    if (outcome.kind === 'failed') tally.failed++;
    if (outcome.kind === 'completed') tally.pages += outcome.record.page_count ?? 0;
    const detail =
      outcome.kind === 'completed'
        ? `completed, ${outcome.record.page_count ?? '?'} page${outcome.record.page_count === 1 ? '' : 's'} (${outcome.record.route})`
        : (outcome.record.error ?? outcome.kind);
    reporter.finished(job.input.file, barKind(outcome), detail, tally);
    const kind: EntryOutcome = outcome.kind;
    // A result the journal holds is never replaced by a worse one (--fresh stopped or refused):
    // the record stays the completed one; the report's outcome says what this run's attempt came to.
    const kept = outcome.kind !== 'completed' && job.prior?.fact === 'completed' ? priorRecord(job) : undefined;
    // '' for a large file stopped before it was hashed (on its upload).
    const setAside =
      kept === undefined && outcome.kind === 'failed' && outcome.failure !== undefined && failsAgain(outcome.failure);
    emitCopies(job, (copy) => ({
      ...(kept ?? outcome.record),
      file: copy.input.file,
      outcome: kind,
      sha256: job.sha256 || null,
      ...(setAside ? { set_aside: true as const } : {}),
    }));
  };
  const share = workThrough({
    state: journal,
    jobs: [...toResume, ...toSend, ...toCheck],
    retryFailed: options.retryFailed,
    fresh: options.fresh,
    concurrency: options.concurrency,
    maxPending: options.maxPending,
    poll: options.poll,
    deps,
    signal: stopper.signal,
    stopped: () => stopper.reason() !== undefined,
    log,
    start: (job) => (job.action === 'resume' ? pipeline.resume(job) : pipeline.submit(job)),
    decided: (job, concurrent) => {
      tally.done++;
      const prior = priorRecord(job);
      if (!prior) return;
      const outcome: EntryOutcome = concurrent
        ? job.prior?.fact === 'completed'
          ? 'other_worker'
          : 'failed'
        : job.action === 'done'
          ? 'skipped'
          : 'left';
      if (outcome === 'failed') tally.failed++;
      reporter.finished(
        job.input.file,
        outcome !== 'failed' ? 'ok' : 'failed',
        outcome === 'other_worker' ? 'completed by another worker' : (prior.error ?? outcome),
        tally,
      );
      const setAside = outcome !== 'other_worker' && setAsideEarlier(job.prior);
      emitCopies(job, (copy) => ({
        ...prior,
        file: copy.input.file,
        outcome,
        sha256: job.sha256,
        ...(setAside ? { set_aside: true as const } : {}),
      }));
    },
  });
  const pipeline = new Pipeline({
    client,
    journal: share.journal,
    target: plan.targetId,
    identity: plan.identity,
    poll: options.poll,
    maxCredits: options.maxCredits,
    deps,
    sendSlots,
    pendingSlots: new Limiter(options.maxPending),
    signal: stopper.signal,
    log,
    stopped: () => stopper.reason(),
    stop: stopper.stop,
    settle,
    known: plan.known,
    retryFailed: options.retryFailed,
    fresh: options.fresh,
  });

  reporter.start(tally.total);
  if (toResume.length > 0)
    log('info', `resuming ${toResume.length} document${toResume.length === 1 ? '' : 's'} submitted by an earlier run`);
  const held = await share.run();
  for (const { job, holder } of held) {
    const why = `${holder ? `worker ${holder}` : 'another worker'} still held it ${stopper.reason() ? 'when this run stopped' : `after waiting ${Math.round(options.poll.timeoutMs / 1000)} s`}: rerun the same command (or see extract status) to collect its outcome`;
    const documentId = job.prior?.fact === 'submitted' ? job.prior.document_id : null;
    emitCopies(job, (copy) => ({
      ...errorRecord({ file: copy.input.file, document_id: documentId, route: job.prior?.route ?? null }, why),
      outcome: 'pending',
      sha256: job.sha256,
    }));
  }
  return pipeline.charges();
}

function barKind(outcome: Outcome): Finish {
  if (outcome.kind === 'completed') return 'ok';
  if (outcome.kind === 'not_submitted') return 'quiet';
  return outcome.kind === 'pending' ? 'pending' : 'failed';
}
