import { Circuit } from '../../client/circuit.ts';
import type { Log } from '../../client/deps.ts';
import { ServiceClient } from '../../client/service-client.ts';
import { ServiceOffers } from '../../client/offers.ts';
import { errorRecord, notSubmittedRecord } from '../../outputs/record.ts';
import { workThrough } from './claims.ts';
import { Limiter } from './limiter.ts';
import type { BatchDeps, BatchOptions } from '../options.ts';
import type { Charges, Outcome } from '../outcome.ts';
import { Pipeline } from './pipeline.ts';
import { priorRecord, type Job, QueuedJobs, queued, type BatchPlan } from '../plan/index.ts';
import { failsAgain, setAsideEarlier } from '../../cost/rerun.ts';
import type { Finish, Reporter, Tally } from '../../ui/progress.ts';
import type { Records } from '../records.ts';
import type { Stopper } from './stopper.ts';
import type { EntryOutcome } from '../summary.ts';
import type { FileStamp } from '../discover.ts';
import { inert } from '../../inert.ts';

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
  const { journal, queue } = plan;
  const emit = (job: Job, entry: Entry, read = job.read): void => records.emit(job.ordinal, entry, read);
  const tally: Tally = { total: queued(queue), done: 0, failed: 0, pages: 0 };
  // Documents left pending by a stop, by what is said of them: a line per kind, not one per document.
  const afterStop = new Map<string, number>();

  // What --move-done compares for a file read again to be sent (planned.ts BatchPlan.readAtSend).
  const readAtSend = plan.readAtSend ?? new Map<number, FileStamp>();
  plan.readAtSend = readAtSend;
  const sendSlots = new Limiter(options.concurrency, { now: deps.now });
  const share = workThrough({
    state: journal,
    jobs: new QueuedJobs(plan.jobs, [queue.resume, queue.submit, queue.check]),
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
    decided: (job, concurrent) => decided(job, concurrent, tally, reporter, emit),
  });
  const pipeline = new Pipeline({
    client: serviceClient(options, deps, log, sendSlots, serviceOffers(plan, deps, log)),
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
    settle: (job, outcome) => {
      if (outcome.read !== undefined && outcome.read !== job.read) readAtSend.set(job.ordinal, outcome.read);
      // Taken over by another worker (this one held it past its lease): nothing was sent from here; it is waited for.
      if (!journal.lost(job.key))
        settled(job, outcome, tally, reporter, emit, stopper.reason() !== undefined ? afterStop : undefined);
    },
    known: plan.known,
    retryFailed: options.retryFailed,
    fresh: options.fresh,
    passwordsGiven: options.passwordFile !== undefined,
    beforeSend: deps.beforeSend,
    adopt: share.adopt,
  });

  reporter.start(tally.total);
  const resuming = queue.resume.length;
  if (resuming > 0)
    log('info', `resuming ${resuming} document${resuming === 1 ? '' : 's'} submitted by an earlier run`);
  const held = await share.run();
  for (const [detail, n] of afterStop) log('warn', `${n} document${n === 1 ? '' : 's'}: ${detail}`);
  for (const { job, holder } of held)
    emit(job, heldEntry(job, holder, stopper.reason() !== undefined, options.poll.timeoutMs));
  recordCopies(plan, records);
  return pipeline.charges();
}

type Entry = Parameters<Records['emit']>[1];

/**
 * Two inputs with the same content are one document: sent once (the first), recorded under each
 * name, once the first one's record is made (the plan found the copies: planned.ts CopyIndex).
 * A first input whose file changed before its send was recorded under what it held then: its
 * copies are not, and wait for the rerun, which sends their content.
 */
export function recordCopies(plan: Pick<BatchPlan, 'copies' | 'jobs'>, records: Records): void {
  for (const [copy, first] of plan.copies) {
    const entry = records.get(first);
    if (entry === undefined) continue;
    const job = plan.jobs.get(copy);
    if (entry.sha256 !== null && entry.sha256 !== job.sha256) {
      const why = `not submitted: ${inert(entry.file)}, which had the same content, changed before it was sent; rerun the same command to send this file`;
      records.emit(
        copy,
        {
          ...notSubmittedRecord({ file: job.input.file, route: null }, why),
          outcome: 'not_submitted',
          sha256: job.sha256,
        },
        job.read,
      );
      continue;
    }
    records.emit(copy, { ...entry, file: job.input.file }, job.read);
  }
}

/**
 * What the service is known to offer, from the journal; what the run learns is said once and
 * kept on the key's parser fact, so the next run does not ask again.
 */
function serviceOffers(plan: BatchPlan, deps: BatchDeps, log: Log): ServiceOffers {
  return new ServiceOffers(plan.offers, (offers, what) => {
    log('info', what);
    const { key, primary, not } = plan.identity;
    plan.journal
      .append({
        fact: 'parser',
        at: new Date(deps.now()).toISOString(),
        target: key,
        parser: primary,
        ...(not.size > 0 ? { not: [...not] } : {}),
        offers,
      })
      // Learnt again at no cost by the next run if this one could not keep it (the journal's own stop says why).
      .catch(() => {});
  });
}

function serviceClient(
  options: BatchOptions,
  deps: BatchDeps,
  log: Log,
  sendSlots: Limiter,
  offers: ServiceOffers,
): ServiceClient {
  return new ServiceClient(
    {
      baseUrl: options.baseUrl,
      apiKey: options.apiKey ?? '',
      hooks: { rateLimited: () => sendSlots.rateLimited(), succeeded: () => sendSlots.succeeded() },
      circuit: new Circuit(deps.now, deps.circuit),
      offers,
    },
    { ...deps, log },
  );
}

/** A document the pipeline ended: counted, shown, and recorded under each of its names. */
function settled(
  job: Job,
  outcome: Outcome,
  tally: Tally,
  reporter: Reporter,
  emit: (job: Job, entry: Entry, read?: FileStamp) => void,
  afterStop?: Map<string, number>,
): void {
  // A file the run never sent did not finish: the bar counts only what did; the stop line says why.
  if (outcome.kind !== 'not_submitted') tally.done++;
  if (outcome.kind === 'failed') tally.failed++;
  if (outcome.kind === 'completed') tally.pages += outcome.record.page_count ?? 0;
  const how = barKind(outcome);
  const detail = finishedDetail(outcome);
  // After a stop, the documents still pending are counted, said once by the caller (each with -v).
  if (how === 'pending' && afterStop !== undefined) afterStop.set(detail, (afterStop.get(detail) ?? 0) + 1);
  reporter.finished(job.input.file, how === 'pending' && afterStop !== undefined ? 'quiet' : how, detail, tally);
  const kind: EntryOutcome = outcome.kind;
  // A result the journal holds is never replaced by a worse one (--fresh stopped or refused):
  // the record stays the completed one; the report's outcome says what this run's attempt came to.
  const kept = outcome.kind !== 'completed' && job.prior?.fact === 'completed' ? priorRecord(job) : undefined;
  // '' for a large file stopped before it was hashed (on its upload).
  const setAside =
    kept === undefined && outcome.kind === 'failed' && outcome.failure !== undefined && failsAgain(outcome.failure);
  emit(
    job,
    {
      ...(kept ?? outcome.record),
      file: job.input.file,
      outcome: kind,
      sha256: job.sha256 || null,
      ...(setAside ? { set_aside: true as const } : {}),
      ...(kept === undefined && outcome.pagesCountedBy !== undefined
        ? { pages_counted_by: outcome.pagesCountedBy }
        : {}),
    },
    outcome.read ?? job.read,
  );
}

/** The progress line's detail for a document the pipeline ended. */
function finishedDetail(outcome: Outcome): string {
  return outcome.kind === 'completed'
    ? `completed, ${outcome.record.page_count ?? '?'} page${outcome.record.page_count === 1 ? '' : 's'} (${outcome.record.route})`
    : (outcome.record.error ?? outcome.kind);
}

/** A claimed document needing no work from this worker: its record comes from the journal. */
function decided(
  job: Job,
  concurrent: boolean,
  tally: Tally,
  reporter: Reporter,
  emit: (job: Job, entry: Entry) => void,
): void {
  tally.done++;
  const prior = priorRecord(job);
  if (!prior) return;
  const outcome = decidedOutcome(job, concurrent);
  if (outcome === 'failed') tally.failed++;
  reporter.finished(
    job.input.file,
    outcome !== 'failed' ? 'ok' : 'failed',
    outcome === 'other_worker' ? 'completed by another worker' : (prior.error ?? outcome),
    tally,
  );
  const setAside = outcome !== 'other_worker' && setAsideEarlier(job.prior);
  emit(job, {
    ...prior,
    file: job.input.file,
    outcome,
    sha256: job.sha256,
    ...(setAside ? { set_aside: true as const } : {}),
  });
}

/**
 * The report's outcome of a document this worker did not send: settled by another worker while
 * the batch ran (`concurrent`: its completion or its failure), or by an earlier run (skipped, left).
 */
export function decidedOutcome(job: Job, concurrent: boolean): EntryOutcome {
  if (concurrent) return job.prior?.fact === 'completed' ? 'other_worker' : 'failed';
  return job.action === 'done' ? 'skipped' : 'left';
}

/** The record of a document another worker still holds when this run ends: pending, to collect on a rerun. */
function heldEntry(job: Job, holder: string | undefined, stopped: boolean, timeoutMs: number): Entry {
  const why = `${holder ? `worker ${holder}` : 'another worker'} still held it ${stopped ? 'when this run stopped' : `after waiting ${Math.round(timeoutMs / 1000)} s`}: rerun the same command (or see extract status) to collect its outcome`;
  const documentId = job.prior?.fact === 'submitted' ? job.prior.document_id : null;
  return {
    ...errorRecord({ file: job.input.file, document_id: documentId, route: job.prior?.route ?? null }, why),
    outcome: 'pending',
    sha256: job.sha256,
  };
}

function barKind(outcome: Outcome): Finish {
  if (outcome.kind === 'completed') return 'ok';
  if (outcome.kind === 'not_submitted') return 'quiet';
  return outcome.kind === 'pending' ? 'pending' : 'failed';
}
