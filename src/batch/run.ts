import { randomUUID } from 'node:crypto';
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
import type { ClientDeps, Log } from '../client/deps.ts';
import { streamInputs, type DiscoveryStream, type LinkNotFollowed, type UnreadableInput } from './discover.ts';
import { finishBatch, finishDryRun } from './finish/finish.ts';
import { candidates, foreignTargets, identityOf, learned, lookup, type Identity } from '../journal/identity.ts';
import { knownFromMap, stateKey, type JournalView, type KnownLookup, type ParserFact } from '../journal/journal.ts';
import type { Charges } from './send/pipeline.ts';
import { HASH_WHILE_SENDING_ABOVE, type BatchDeps, type BatchOptions } from './options.ts';
import { checkMoveFolders, folderExclusions } from './finish/move.ts';
import type { ProbedService } from './plan/probe.ts';
import { countPages, requirePageCounter } from './plan/pages.ts';
import { planJobs, priorRecord, replan, type IgnoredInput, type Job } from './plan/jobs.ts';
import { CopyIndex, PlanStore, queued, sendQueue, type BatchPlan } from './plan/planned.ts';
import { chooseStyle, colorLevel, createReporter, type Reporter } from '../ui/progress.ts';
import { createRecords, unreadableKey, type Records } from './records.ts';
import { memoryState, openState, parseStateSpec, type StateJournal, type StateSpec } from '../journal/state/index.ts';
import {
  discardJournal,
  earlierJournals,
  importLegacy,
  journalToMake,
  makeJournalFolder,
  userJournalPath,
} from '../journal/state/user-journal.ts';
import { openStatCache, statCachePathFor, type StatCache } from './plan/stat-cache.ts';
import { setAsideEarlier } from '../cost/rerun.ts';
import { settledOnly, type Unsettled } from './plan/settle.ts';
import { formatDuration } from '../ui/format.ts';
import { createStopper } from './send/stopper.ts';
import { type BatchSummary, neverAnswered } from './summary.ts';

/**
 * `extract [options] <inputs...>`: discovers the inputs, plans each file against the
 * journal, sends what is new, collects what earlier runs submitted, and writes one record
 * per input. Returns the summary; the CLI layer turns its exit_code into the process's.
 *
 * Three steps: plan (below: inputs, journal, what to do with each file), send (send.ts) and
 * finish (finish.ts: outputs, report, summary). A dry run plans and finishes.
 */
export async function runBatch(inputs: string[], options: BatchOptions, given: BatchDeps): Promise<BatchSummary> {
  // Under GitHub Actions the runner reads stdout for commands: the records there are fenced (runner-fence.ts).
  const deps =
    given.env.GITHUB_ACTIONS === 'true'
      ? { ...given, stdout: (await import('./finish/runner-fence.ts')).fencedStdout(given.stdout, randomUUID()) }
      : given;
  const started = deps.now();
  if (!options.dryRun) requireKey(options.apiKey);
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
  // The user's journal of this service, when this run makes it: gone again if the service never answers.
  const newJournal = journalToMake(deps.env, options.baseUrl, options.state, options.dryRun);
  let summary: BatchSummary | undefined;
  let jobs: PlanStore | undefined;
  let unsubscribe: (() => void) | undefined;
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
    const plan = await planBatch(inputs, options, deps, {
      reporter,
      log,
      records,
      opened: (j) => {
        journal = j;
      },
      writeFailed: (message) => journalFailed(message),
    });
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
    reporter.stop();
    // A fence left open would keep the runner deaf to the rest of the step (a dry run, a throw).
    if (deps.stdout !== given.stdout) await (await import('./finish/runner-fence.ts')).closeFence(deps.stdout);
    await journal?.close().catch((err: unknown) => {
      // The summary is lost with the throw: so are the records it would have read.
      records.close();
      throw err;
    });
    if (newJournal !== undefined && summary !== undefined && neverAnswered(summary)) discardJournal(newJournal);
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

type PlanContext = {
  reporter: Reporter;
  log: Log;
  records: Records;
  /** Called as soon as the journal is open, so that the run closes it whatever happens next. */
  opened: (journal: StateJournal) => void;
  /** The journal refused a write. */
  writeFailed: (message: string) => void;
};

/**
 * The plan step: finds the inputs, opens the journal, decides for each file (send, resume,
 * skip, leave) and emits the records of files this run will not touch.
 *
 * A window of inputs at a time (PLAN_WINDOW files, as discovery finds them): each is read,
 * looked up in the journal (one query a window), and its jobs written to the plan store on disk,
 * so what the plan holds does not grow with the batch.
 */
async function planBatch(
  inputs: string[],
  options: BatchOptions,
  deps: BatchDeps,
  ctx: PlanContext,
): Promise<BatchPlan> {
  const { reporter, log, records } = ctx;
  reporter.planning('finding input files');
  const discovery = findInputs(inputs, options, deps);
  // The first window before the journal opens: a path that names nothing costs nothing, not even a journal folder.
  const windows = discovery.chunks[Symbol.asyncIterator]();
  const first = await windows.next();
  const spec = stateSpecOf(options, deps);
  const journal = await openJournal(spec, options, deps, ctx);
  const replay = await replayJournal(journal, spec, options, deps, log);

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
    // A batch of more than one window favours memory even when it reads and sends nothing: with the
    // plan streamed, V8's default heap growth still grows a large rerun's memory with the batch
    // (bench row 10), while a batch of one window keeps the default's speed.
    if (discovery.found.files > (deps.planWindow ?? PLAN_WINDOW)) deps.favourMemory?.();
    const { files, unsettled } = settledOnly(window.value, options.settleMs ?? 0, settleNow);
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
  plan.linksNotFollowed = discovery.found.linksNotFollowed;
  plan.hidden = discovery.found.hidden;
  logFound(discovery.found, log);
  logUnsettled(plan.unsettled ?? [], options.settleMs ?? 0, log);
  plan.unreadable = [...discovery.found.unreadable, ...plan.unreadable];
  logIgnored(plan.ignored, log);
  emitUnreadable(plan.unreadable, records, log);
  return plan;
}

/** The plan's window: files read, looked up in the journal (one query) and stored together. */
const PLAN_WINDOW = 1_000;

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

/** Finds the input files, a window at a time (the chunks end with discovery's usage error, if any). */
function findInputs(inputs: string[], options: BatchOptions, deps: BatchDeps): DiscoveryStream {
  const discovery = streamInputs(inputs, {
    cwd: deps.cwd,
    ignore: [...options.ignore, ...folderExclusions({ done: options.moveDone, failed: options.moveFailed }, deps.cwd)],
    stdin: deps.stdin,
    followLinks: options.followLinks,
    hidden: options.hidden,
    foundIn: options.asFound,
    chunk: deps.planWindow ?? PLAN_WINDOW,
  });
  // extract watch names the files it found in its folders: a non-document among them is skipped, as in a walk.
  if (options.asFound === undefined) return discovery;
  return {
    found: discovery.found,
    chunks: {
      async *[Symbol.asyncIterator]() {
        for await (const chunk of discovery.chunks) {
          for (const f of chunk) f.explicit = false;
          yield chunk;
        }
      },
    },
  };
}

/** What discovery found besides the files, said once it is over. */
function logFound(found: DiscoveryStream['found'], log: Log): void {
  const files = found.files;
  for (const p of found.unmatched) log('warn', `${p}: matched no file`);
  logLinksNotFollowed(found.linksNotFollowed, log);
  logHidden(found.hidden, log);
  if (found.nothingIn !== undefined) log('info', `nothing to do: ${found.nothingIn}`);
  else log('info', `found ${files} file${files === 1 ? '' : 's'}`);
}

async function openJournal(
  spec: StateSpec | null,
  options: BatchOptions,
  deps: BatchDeps,
  ctx: PlanContext,
): Promise<StateJournal> {
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
          log: ctx.log,
          lock: deps.lock,
          write: deps.writeJournal,
          env: deps.env,
          onWriteFailed: (err) => ctx.writeFailed(err.message),
        });
  ctx.opened(journal);
  return journal;
}

/** What the journal knows, with earlier versions' journals taken in (or, in a dry run, read behind it). */
async function replayJournal(
  journal: StateJournal,
  spec: StateSpec | null,
  options: BatchOptions,
  deps: BatchDeps,
  log: Log,
): Promise<JournalView> {
  // Earlier versions' journals (the user's JSONL, this folder's): taken in once (a dry run only reads them).
  const earlier = options.state === undefined ? earlierJournals(deps.env, options.baseUrl, deps.cwd) : [];
  if (!options.dryRun) {
    for (const path of earlier) {
      const imported = await importLegacy(journal, path);
      log(
        'info',
        `imported the ${imported.facts} facts of ${path} into ${journal.where}, the journal every folder now shares; the old file is kept as ${imported.keptAs}`,
      );
    }
  }
  // --fresh reads the journal too: it sends every file again, but what the journal knows of a
  // document changes only when this run actually sends it (a run that sends nothing changes nothing).
  let replay: JournalView = await viewOf(spec === null ? undefined : journal);
  if (options.dryRun && earlier.length > 0) {
    // A dry run only reads the older journals: what they know stands behind the journal's own answers.
    const { readJournal } = await import('../journal/journal-read.ts');
    const olds = await Promise.all(earlier.map((path) => readJournal(path)));
    const parsers = new Map(replay.parsers);
    for (const old of olds) for (const [key, fact] of old.parsers) if (!parsers.has(key)) parsers.set(key, fact);
    replay = {
      ...replay,
      known: behind(
        replay.known,
        olds.map((old) => knownFromMap(old.known)),
      ),
      parsers,
    };
  }
  if (replay.skipped > 0)
    log(
      replay.skipped === 1 && replay.torn ? 'debug' : 'warn',
      `${journal.where}: ignored ${replay.skipped} unreadable line${replay.skipped === 1 ? '' : 's'} (a torn last line after a crash is expected)`,
    );
  if (journal.shared && !options.dryRun && options.state !== undefined)
    log('info', `sharing the batch through ${journal.where} as worker ${journal.worker}`);
  return replay;
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

function logHidden(hidden: string[], log: Log): void {
  if (hidden.length === 0) return;
  const more = hidden.length > 5 ? ` and ${hidden.length - 5} more (see --report)` : '';
  log(
    'info',
    `skipped ${hidden.length} hidden file${hidden.length === 1 ? '' : 's'} or folder${hidden.length === 1 ? '' : 's'}: ${hidden.slice(0, 5).join(', ')}${more}; --hidden includes them`,
  );
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
    job.pages = (await countPages(job.input.path, job.mimeType)) ?? undefined;
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

/**
 * A run about to send contents that another key's documents hold asks the service whether this
 * key can read them (probe.ts: a read, never a charge). If it can, the two keys are one parser:
 * the fact is journaled and those files are planned again under it (done, collected or left as
 * that history says); if it cannot, the other key is ruled out and not asked about again.
 */
async function settleIdentity(
  jobs: Job[],
  seen: { known: KnownLookup; parsers: Map<string, ParserFact>; identity: Identity; foreign: Set<string> },
  ctx: { journal: StateJournal; service: ProbedService; deps: ClientDeps; retryFailed: boolean },
): Promise<Identity> {
  const { known, parsers, identity, foreign } = seen;
  const fresh = jobs.filter((j) => j.action === 'submit' && j.prior === undefined && j.unhashed === undefined);
  const ahead = (targets: Iterable<string>) =>
    known.prefetch?.(fresh.flatMap((j) => Array.from(targets, (target) => stateKey(j.sha256, target))));
  await ahead(foreign);
  const found = candidates(
    known,
    fresh.map((j) => j.sha256),
    identity,
    foreign,
  );
  if (found.length === 0) return identity;
  const { probe } = await import('./plan/probe.ts');
  const shown = await probe(ctx.service, found, ctx.deps);
  const facts = learned(identity, parsers, shown.seen, shown.unseen, new Date(ctx.deps.now()));
  for (const fact of facts) await ctx.journal.append(fact);
  const next = identityOf(identity.key, new Map([...parsers, ...facts.map((f) => [f.target, f] as const)]));
  if (shown.seen.length > 0)
    ctx.deps.log(
      'info',
      'this API key reads documents the journal holds under another key: they are the same parser, and what the journal knows of them stands (nothing is sent again)',
    );
  if (shown.unseen.length > 0 && shown.seen.length === 0)
    ctx.deps.log(
      'warn',
      "this API key is another parser's than the key these files were extracted with before (it cannot read their documents): they are extracted again, and paid, with this key's parser and its fields. To keep the earlier results, run with the earlier key",
    );
  await ahead(next.targets);
  for (const job of fresh) {
    const { key, target, prior } = lookup(known, job.sha256, next);
    if (prior === undefined) continue;
    Object.assign(job, replan({ ...job, key, target }, prior, ctx.retryFailed, false));
  }
  return next;
}

/** What a run starts from: the journal's lookups (its projection). */
async function viewOf(journal: StateJournal | undefined): Promise<JournalView> {
  if (journal === undefined) return { known: knownFromMap(new Map()), parsers: new Map(), skipped: 0, torn: false };
  return journal.view();
}

/** Lookups in `first`, then (for what it does not know) in each of `rest`. */
function behind(first: KnownLookup, rest: KnownLookup[]): KnownLookup {
  const all = [first, ...rest];
  return {
    get: (key) => {
      for (const known of all) {
        const fact = known.get(key);
        if (fact !== undefined) return fact;
      }
      return undefined;
    },
    names: (file) => all.some((known) => known.names(file)),
    targets: () => new Set(all.flatMap((known) => [...known.targets()])),
  };
}

/**
 * The journal a run keeps: none (--no-state), the one --state names, or by default the user's
 * journal for this service (state/user-journal.ts), its folder made on first use.
 */
function stateSpecOf(options: BatchOptions, deps: BatchDeps): StateSpec | null {
  if (options.state === null) return null;
  if (options.state !== undefined) return parseStateSpec(options.state, deps.cwd);
  const path = userJournalPath(deps.env, options.baseUrl);
  if (!options.dryRun) makeJournalFolder(path);
  return parseStateSpec(path, deps.cwd);
}

/** One line for the links a walk left out (each is in --report), naming the folders they leave. */
function logLinksNotFollowed(links: LinkNotFollowed[], log: Log): void {
  if (links.length === 0) return;
  const folders = [...new Set(links.map((l) => l.folder))].join(', ');
  log(
    'info',
    `left out ${links.length} symbolic link${links.length === 1 ? '' : 's'} that lead${links.length === 1 ? 's' : ''} outside ${folders} (see --report): --follow-links follows them`,
  );
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

function requireKey(apiKey: string | undefined): void {
  if (apiKey === undefined || apiKey === '') {
    throw new ExtractError(
      'usage',
      'no API key: pass --api-key, set EXTRACT_API_KEY, run "extract config set api_key -", or try --local',
    );
  }
  checkApiKey(apiKey, 'the options');
}
