import type { Log } from '../../client/deps.ts';
import { keyFingerprint } from '../../config/settings.ts';
import { setAsideEarlier } from '../../cost/rerun.ts';
import { foreignTargets, identityOf } from '../../journal/identity.ts';
import type { RunJournal } from '../../journal/run-journal.ts';
import { errorRecord } from '../../outputs/record.ts';
import { formatDuration } from '../../ui/format.ts';
import type { Reporter } from '../../ui/progress.ts';
import type { UnreadableInput } from '../discover.ts';
import { logFound, type FoundInputs } from '../discover/index.ts';
import { HASH_WHILE_SENDING_ABOVE, type BatchDeps, type BatchOptions } from '../options.ts';
import { unreadableKey, type Records } from '../records.ts';
import { planJobs, priorRecord, type Job } from './jobs.ts';
import type { IgnoredInput, Unsettled } from '../summary.ts';
import { countPages, requirePageCounter } from './pages.ts';
import { settleIdentity } from './parser.ts';
import { CopyIndex, PlanStore, sendQueue, type BatchPlan } from './planned.ts';
import { settledOnly } from './settle.ts';
import { openStatCache, statCachePathFor, type StatCache } from './stat-cache.ts';

export type PlanContext = {
  reporter: Reporter;
  log: Log;
  records: Records;
};

/**
 * The plan step: decides for each file the discover step finds (send, resume, skip, leave)
 * against what the run's journal knows, and emits the records of files this run will not touch.
 *
 * A window of inputs at a time (PLAN_WINDOW files, as discovery finds them): each is read,
 * looked up in the journal (one query a window), and its jobs written to the plan store on disk,
 * so what the plan holds does not grow with the batch.
 */
export async function planBatch(
  inputs: FoundInputs,
  opened: RunJournal,
  options: BatchOptions,
  deps: BatchDeps,
  ctx: PlanContext,
): Promise<BatchPlan> {
  const { reporter, log, records } = ctx;
  const { journal, spec, view: replay } = opened;
  const { first, rest: windows, found } = inputs;

  // A dry run without a key matches nothing in the journal: it plans every file as new.
  const targetId = options.apiKey ? keyFingerprint(options.apiKey, options.baseUrl) : 'no-key';
  let identity = identityOf(targetId, replay.parsers);
  // Documents under targets this key may share a parser with: settled by a probe after each window's plan.
  const foreign = options.fresh ? new Set<string>() : foreignTargets(replay.known, identity);
  // The stat cache sits beside a journal file (JSONL or SQLite); a dry run reads it but writes nothing.
  // Runs sharing a SQLite journal each replace it whole (one rename): a cache, the last one wins.
  const cache = spec !== null && spec.kind !== 'postgres' ? openStatCache(statCachePathFor(spec.path)) : undefined;
  const run = {
    shared: journal.shared,
    dryRun: options.dryRun,
    // Whether the finish step reads every job back (the dry run's lines, the files to move).
    walked: options.dryRun || options.moveDone !== undefined || options.moveFailed !== undefined,
  };
  const plan: BatchPlan = {
    journal,
    known: replay.known,
    targetId,
    identity,
    offers: replay.parsers.get(targetId)?.offers,
    jobs: PlanStore.open(),
    queue: sendQueue(),
    copies: new Map(),
    unreadable: [],
    ignored: [],
    linksNotFollowed: [],
    hidden: [],
    unsettled: [],
  };
  const firsts = new CopyIndex(plan.jobs);
  const settleNow = deps.now();
  let read = 0;
  for (let window = first; window.done !== true; window = await windows.next()) {
    // A large batch favours memory even when it reads and sends nothing: with the plan streamed,
    // V8's default heap growth still grows a large rerun's memory with the batch (bench row 10),
    // while a small one keeps the default's speed.
    if (found.files > FAVOUR_MEMORY_ABOVE) deps.favourMemory?.();
    const { files, unsettled } = settledOnly(window.value, options.settle, settleNow);
    plan.unsettled?.push(...unsettled);
    const planned = await planJobs({
      files,
      known: replay.known,
      target: identity.primary,
      identity,
      route: options.route,
      inlineMax: options.inlineMax,
      retryFailed: options.retryFailed,
      fresh: options.fresh,
      allFiles: options.allFiles,
      cache,
      now: deps.now,
      hashWhileSendingAbove: hashWhileSendingAbove(options, journal.shared, foreign.size > 0),
      onRead: deps.favourMemory,
      onProgress: (done) => reporter.planning(`reading ${read + done} files`),
      firstOrdinal: plan.jobs.count,
    });
    read += files.length;
    // A stamp is the stat cache's and --settle's, both done with now.
    for (const file of files) file.stamp = undefined;
    if (!options.dryRun && options.apiKey && foreign.size > 0) {
      identity = await settleIdentity(
        planned.jobs,
        { known: replay.known, parsers: replay.parsers, identity, foreign },
        {
          journal,
          service: { baseUrl: options.baseUrl, apiKey: options.apiKey, keySource: options.keySource },
          deps: { ...deps, log },
          retryFailed: options.retryFailed,
        },
      );
      plan.identity = identity;
    }
    if (options.maxCredits !== undefined) await requirePageCounter();
    if (options.dryRun || options.maxCredits !== undefined) await countPagesToSend(planned.jobs, reporter);
    plan.unreadable.push(...planned.unreadable);
    plan.ignored.push(...planned.ignored);
    for (const job of planned.jobs) place(job, plan, firsts, run, records);
  }
  if (!options.dryRun) saveStatCache(cache, log);
  else cache?.close();
  plan.linksNotFollowed = found.linksNotFollowed;
  plan.hidden = found.hidden;
  logFound(found, log);
  logUnsettled(plan.unsettled ?? [], options.settle, log);
  plan.unreadable = [...found.unreadable, ...plan.unreadable];
  logIgnored(plan.ignored, log);
  emitUnreadable(plan.unreadable, records, log);
  return plan;
}

/**
 * The plan's window: files read, looked up in the journal (one query) and stored together. What
 * a window holds at once (its journal rows, jobs and records) is garbage a moment later: small
 * enough, it dies young instead of being copied into V8's old generation, which a run favouring
 * memory collects often (bench row 4 rerun).
 */
export const PLAN_WINDOW = 250;

/** A batch past this many files favours memory over speed (cli/heap.ts favourMemory). */
const FAVOUR_MEMORY_ABOVE = 1_000;

/**
 * Stores a planned job and says where it goes: its record now (a document the journal settled:
 * stored without what the journal knew, which its record holds), the send step's queue (one
 * input per content: a later input with the same content is its copy), or nowhere yet (a dry
 * run's records are made at its finish).
 */
function place(
  job: Job,
  plan: BatchPlan,
  firsts: CopyIndex,
  run: { shared: boolean; dryRun: boolean; walked: boolean },
  records: Records,
): void {
  if (recordedAtPlan(job.action, run.shared, run.dryRun)) {
    const prior = priorRecord(job);
    if (prior)
      records.emit(
        job.ordinal,
        Object.assign(prior, {
          outcome: job.action === 'done' ? ('skipped' as const) : ('left' as const),
          sha256: job.sha256,
          ...(setAsideEarlier(job.prior) ? { set_aside: true as const } : {}),
        }),
        job.read,
      );
    // A rerun's done documents are most of its batch: their results are in the record, not written twice,
    // and unless a later step walks the batch (--dry-run, --move-*), nothing of them is.
    if (!run.walked) plan.jobs.skip(job);
    else plan.jobs.add(prior ? { ...job, prior: undefined, resend: undefined } : job);
    return;
  }
  plan.jobs.add(job);
  if (run.dryRun) return;
  const list =
    job.action === 'resume'
      ? plan.queue.resume
      : job.action === 'submit'
        ? plan.queue.submit
        : job.action === 'leave' && run.shared
          ? plan.queue.check
          : undefined;
  if (list === undefined) return;
  const first = firsts.firstOf(job);
  if (first !== undefined) {
    plan.copies.set(job.ordinal, first);
    return;
  }
  firsts.add(job);
  list.push(job.ordinal);
}

/**
 * One read pass for large files (hashed as they are uploaded): not for a page count first, nor
 * with a shared journal, whose workers claim a document by its content before sending it.
 * Nor when other keys' documents are in the journal: a content is matched against them before it is sent.
 */
export function hashWhileSendingAbove(
  options: Pick<BatchOptions, 'dryRun' | 'maxCredits' | 'hashWhileSendingAbove'>,
  shared: boolean,
  foreign: boolean,
): number | undefined {
  return options.dryRun || options.maxCredits !== undefined || shared || foreign
    ? undefined
    : (options.hashWhileSendingAbove ?? HASH_WHILE_SENDING_ABOVE);
}

function logIgnored(ignored: IgnoredInput[], log: Log): void {
  if (ignored.length === 0) return;
  const names = ignored.slice(0, 5).map((x) => `${x.file} (${x.mimeType})`);
  const more = ignored.length > 5 ? ` and ${ignored.length - 5} more (see --report)` : '';
  log(
    'info',
    `skipped ${ignored.length} file${ignored.length === 1 ? '' : 's'} that ${ignored.length === 1 ? 'is' : 'are'} not a document the service reads (PDF, PNG, JPEG, TIFF), uncharged: ${names.join(', ')}${more}; --all-files sends them`,
  );
}

/** Pages counted locally, for --dry-run and --max-credits. */
async function countPagesToSend(jobs: Job[], reporter: Reporter): Promise<void> {
  for (const [i, job] of jobs.entries()) {
    if (job.action !== 'submit') continue;
    reporter.planning(`counting pages ${i + 1}/${jobs.length}`);
    // A part refused on this machine fails unsent (batch/send/locked.ts refusedHere): it costs nothing.
    job.pages = job.input.refused !== undefined ? 0 : ((await countPages(job.input.path, job.mimeType)) ?? undefined);
  }
}

/** Emits the records of the inputs that could not be read. */
function emitUnreadable(unreadable: UnreadableInput[], records: Records, log: Log): void {
  for (const u of unreadable) {
    log('error', u.reason);
    records.emit(unreadableKey(u.file), {
      ...errorRecord({ file: u.file, document_id: null, route: null }, u.reason),
      outcome: 'unreadable',
      sha256: null,
    });
  }
}

/**
 * Whether a document's record is made at the plan (from the journal) rather than by the send step.
 * With a shared journal, a document left at the replay (a send in flight) may belong to a
 * live worker: the claim decides (in the send step). A completed one is final either way.
 * The record is made for this entry: completed with what the entry adds, not copied.
 */
export function recordedAtPlan(action: Job['action'], shared: boolean, dryRun: boolean): boolean {
  return action === 'done' || (action === 'leave' && (!shared || dryRun));
}

/** One line for the files --settle leaves for the next run (each is in --report). */
function logUnsettled(all: Unsettled[], settleMs: number, log: Log): void {
  const partial = all.filter((u) => u.reason === 'partial download');
  if (partial.length > 0) {
    const n = partial.length;
    const more = n > 5 ? ` and ${n - 5} more (see --report)` : '';
    log(
      'info',
      `left ${n} partial download${n === 1 ? '' : 's'} (still arriving) for the next run: ${partial
        .slice(0, 5)
        .map((u) => u.file)
        .join(', ')}${more}`,
    );
  }
  const unsettled = all.filter((u) => u.reason === undefined);
  if (unsettled.length === 0) return;
  const n = unsettled.length;
  const names = unsettled.slice(0, 5).map((u) => u.file);
  const more = n > 5 ? ` and ${n - 5} more (see --report)` : '';
  log(
    'info',
    `left ${n} file${n === 1 ? '' : 's'} changed in the last ${formatDuration(settleMs)} (--settle: still being written?) for the next run: ${names.join(', ')}${more}`,
  );
}

/** A cache: failing to write it costs the next run some reading, not this run its result. */
function saveStatCache(cache: StatCache | undefined, log: Log): void {
  try {
    cache?.save();
  } catch (err) {
    log('debug', `the stat cache was not saved: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    cache?.close();
  }
}
