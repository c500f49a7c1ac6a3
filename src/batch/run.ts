import { resolve } from 'node:path';
import { Circuit } from '../client/circuit.ts';
import { ServiceClient } from '../client/service-client.ts';
import { checkApiKey, keyFingerprint } from '../config/settings.ts';
import { EXIT_CODES, ExtractError } from '../errors.ts';
import {
  checkExplode,
  listTablePaths,
  createStreamWriter,
  isStreamed,
  prepareOutput,
  resolveOutput,
  writeOutputs,
  writeFileAtomic,
  type StreamWriter,
} from '../outputs/index.ts';
import { errorRecord, notSubmittedRecord, pendingRecord, recordFields } from '../outputs/record.ts';
import { redact } from '../redact.ts';
import { discoverInputs } from './discover.ts';
import { keyHint } from './session.ts';
import { workThrough } from './claims.ts';
import type { Replay } from './journal.ts';
import { Limiter } from './limiter.ts';
import { HASH_WHILE_SENDING_ABOVE, type BatchDeps, type BatchOptions } from './options.ts';
import { countPages } from './pages.ts';
import { Pipeline, type Outcome, type StopReason } from './pipeline.ts';
import { planJobs, priorRecord, type IgnoredInput, type Job } from './plan.ts';
import { memoryState, openState, parseStateSpec, type StateJournal } from './state/index.ts';
import { openStatCache, statCachePathFor, type StatCache } from './state/stat-cache.ts';
import { chooseStyle, createReporter, useColor, type Tally } from './progress.ts';
import { summaryLines, tallySummary, type BatchSummary, type EntryOutcome, type ReportEntry } from './summary.ts';

/**
 * `extract [options] <inputs...>`: discovers the inputs, plans each file against the
 * journal, sends what is new, collects what earlier runs submitted, and writes one record
 * per input. Returns the summary; the CLI layer turns its exitCode into the process's.
 */
export async function runBatch(inputs: string[], options: BatchOptions, deps: BatchDeps): Promise<BatchSummary> {
  const started = deps.now();
  if (!options.dryRun) requireKey(options.apiKey);
  // Decide the output before paying for anything: a typo in -o costs nothing.
  const target = resolveOutput({ out: options.out, format: options.format, cwd: deps.cwd });
  checkExplode(target, options.explode);
  if (!options.dryRun) await prepareOutput(target);

  const reporter = await createReporter({
    stderr: deps.stderr,
    style: chooseStyle(deps.isTTY, deps.env, options.noProgress),
    verbosity: options.verbosity,
    color: useColor(deps.isTTY, deps.env),
    now: deps.now,
  });
  const log = reporter.log.bind(reporter);
  let state: StateJournal | undefined;
  let unsubscribe: (() => void) | undefined;
  try {
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
    state = journal;
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
    const ignored = plan.ignored;
    if (ignored.length > 0) {
      const names = ignored.slice(0, 5).map((x) => `${x.file} (${x.mimeType})`);
      const more = ignored.length > 5 ? ` and ${ignored.length - 5} more (see --report)` : '';
      log(
        'info',
        `skipped ${ignored.length} file${ignored.length === 1 ? '' : 's'} that ${ignored.length === 1 ? 'is' : 'are'} not a PDF or an image, uncharged: ${names.join(', ')}${more}; --all-files sends them`,
      );
    }
    const jobs = plan.jobs;

    if (options.dryRun || options.maxCredits !== undefined) {
      for (const [i, job] of jobs.entries()) {
        if (job.action !== 'submit') continue;
        reporter.planning(`counting pages ${i + 1}/${jobs.length}`);
        job.pages = (await countPages(job.input.path, job.mimeType)) ?? undefined;
      }
    }

    // Records by input order; filled as documents end.
    const entries = new Map<string, ReportEntry>();
    const stream: StreamWriter | undefined =
      !options.dryRun && isStreamed(target) ? createStreamWriter(deps.stdout) : undefined;
    const emit = (key: string, entry: ReportEntry): void => {
      entries.set(key, entry);
      if (stream) void stream.write(recordFields(entry));
    };
    for (const u of unreadable) {
      log('error', u.reason);
      emit(`unreadable:${u.file}`, {
        ...errorRecord({ file: u.file, document_id: null, route: null }, u.reason),
        outcome: 'unreadable',
        sha256: null,
      });
    }
    for (const job of jobs) {
      const prior = priorRecord(job);
      // With a shared journal, a document left at the replay (a send in flight) may belong to a
      // live worker: the claim decides (below). A completed one is final either way.
      if (prior && (job.action === 'done' || (job.action === 'leave' && (!journal.shared || options.dryRun))))
        emit(job.input.realPath, { ...prior, outcome: job.action === 'done' ? 'skipped' : 'left', sha256: job.sha256 });
    }

    if (options.dryRun) {
      reporter.stop();
      return await finishDryRun(
        jobs,
        entries,
        unreadable.map((u) => `unreadable:${u.file}`),
        ignored,
        options,
        deps,
        started,
      );
    }

    // Two inputs with the same content are one document: sent once, recorded under each name.
    const copies = new Map<string, Job[]>();
    const leaders: Job[] = [];
    for (const job of jobs) {
      const same = copies.get(job.key);
      if (same) same.push(job);
      else {
        copies.set(job.key, [job]);
        leaders.push(job);
      }
    }
    const toSend = leaders.filter((j) => j.action === 'submit');
    const toResume = leaders.filter((j) => j.action === 'resume');
    const toCheck = journal.shared && !options.dryRun ? leaders.filter((j) => j.action === 'leave') : [];
    const tally: Tally = { total: toSend.length + toResume.length + toCheck.length, done: 0, failed: 0, pages: 0 };
    const abort = new AbortController();
    let stoppedBy: StopReason | undefined;
    let stopMessage: string | null = null;
    const stop = (reason: StopReason, message: string): void => {
      if (stoppedBy !== undefined) return;
      stoppedBy = reason;
      stopMessage = reason === 'auth' ? `${message}: ${keyHint(options.keySource)}` : message;
      message = stopMessage;
      // An outage is said once, by the summary: the moment it was noticed only matters with -v.
      log(
        reason === 'unreachable' ? 'debug' : reason === 'interrupted' || reason === 'max_credits' ? 'warn' : 'error',
        message,
      );
      // 402 and --max-credits only stop submitting; documents already paid for are still collected.
      if (reason === 'interrupted' || reason === 'auth' || reason === 'unreachable') abort.abort();
    };

    let firstSignalAt: number | undefined;
    unsubscribe = deps.onSignal?.((signal) => {
      // conf (the config store) loads when-exit, which re-raises a signal it caught a moment
      // later: a repeat within 250 ms is that echo, not a person pressing Ctrl+C again.
      const repeat = firstSignalAt !== undefined && deps.now() - firstSignalAt > 250;
      firstSignalAt ??= deps.now();
      if (repeat && signal === 'SIGINT') {
        reporter.stop();
        deps.stderr.write(
          'extract: interrupted again: exiting now; the journal is valid, rerun the same command to resume\n',
        );
        deps.exitNow?.(130);
        return;
      }
      stop(
        'interrupted',
        `${signal}: no further submissions; recording what is known (press Ctrl+C again to exit at once)`,
      );
    });

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
      reporter.finished(
        job.input.file,
        outcome.kind === 'completed'
          ? 'ok'
          : outcome.kind === 'not_submitted'
            ? 'quiet'
            : outcome.kind === 'pending'
              ? 'pending'
              : 'failed',
        detail,
        tally,
      );
      const kind: EntryOutcome = outcome.kind;
      for (const copy of copies.get(job.key) ?? [job])
        emit(copy.input.realPath, {
          ...outcome.record,
          file: copy.input.file,
          outcome: kind,
          // '' for a large file stopped before it was hashed (on its upload).
          sha256: job.sha256 || null,
        });
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
      signal: abort.signal,
      stopped: () => stoppedBy !== undefined,
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
        for (const copy of copies.get(job.key) ?? [job])
          emit(copy.input.realPath, { ...prior, file: copy.input.file, outcome, sha256: job.sha256 });
      },
    });
    const pipeline = new Pipeline({
      client,
      journal: share.journal,
      target: targetId,
      poll: options.poll,
      maxCredits: options.maxCredits,
      deps,
      sendSlots,
      pendingSlots: new Limiter(options.maxPending),
      signal: abort.signal,
      log,
      stopped: () => stoppedBy,
      stop,
      settle,
      known: replay.known,
      retryFailed: options.retryFailed,
      fresh: options.fresh,
    });

    reporter.start(tally.total);
    if (toResume.length > 0)
      log(
        'info',
        `resuming ${toResume.length} document${toResume.length === 1 ? '' : 's'} submitted by an earlier run`,
      );
    const held = await share.run();
    for (const { job, holder } of held) {
      const why = `${holder ? `worker ${holder}` : 'another worker'} still held it ${stoppedBy ? 'when this run stopped' : `after waiting ${Math.round(options.poll.timeoutMs / 1000)} s`}: rerun the same command (or see extract status) to collect its outcome`;
      for (const copy of copies.get(job.key) ?? [job]) {
        const documentId = job.prior?.fact === 'submitted' ? job.prior.document_id : null;
        emit(copy.input.realPath, {
          ...errorRecord({ file: copy.input.file, document_id: documentId, route: job.prior?.route ?? null }, why),
          outcome: 'pending',
          sha256: job.sha256,
        });
      }
    }
    reporter.stop();

    const order = [...unreadable.map((u) => `unreadable:${u.file}`), ...jobs.map((j) => j.input.realPath)];
    const documents = order.map((k) => entries.get(k)).filter((e): e is ReportEntry => e !== undefined);
    const summary = tallySummary(documents, {
      stoppedBy: stoppedBy ?? null,
      message: stopMessage,
      elapsedMs: deps.now() - started,
      dryRun: false,
      charges: pipeline.charges(),
      ignored,
    });
    // Outputs and the report cover every input, in input order, whatever the stop.
    await writeOutputs(target, documents.map(recordFields), {
      cwd: deps.cwd,
      explode: options.explode,
      stdout: deps.stdout,
      warn: (m) => log('warn', m),
    });
    // --explode naming no table of the results (a typo, an Object field) was warned about above: a
    // usage error, not a silent success. Results are in the journal: the corrected rerun costs nothing.
    if (options.explode !== undefined && summary.exitCode === EXIT_CODES.ok) {
      const completed = documents.filter((d) => d.status === 'completed').map(recordFields);
      if (completed.length > 0 && !listTablePaths(completed).includes(options.explode))
        summary.exitCode = EXIT_CODES.usage;
    }
    await writeReport(options.report, summary, deps.cwd);
    printSummary(summary, deps, options);
    return summary;
  } finally {
    unsubscribe?.();
    reporter.stop();
    await state?.close();
  }
}

/** A cache: failing to write it costs the next run some reading, not this run its result. */
function saveStatCache(cache: StatCache | undefined, log: (level: 'debug', message: string) => void): void {
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

async function finishDryRun(
  jobs: Job[],
  entries: Map<string, ReportEntry>,
  unreadableKeys: string[],
  ignored: IgnoredInput[],
  options: BatchOptions,
  deps: BatchDeps,
  started: number,
): Promise<BatchSummary> {
  const lines: string[] = [];
  for (const job of jobs) {
    if (job.action === 'submit') {
      entries.set(job.input.realPath, {
        ...notSubmittedRecord({ file: job.input.file, route: job.decision.route }, null),
        outcome: 'planned',
        sha256: job.sha256,
        pages_estimate: job.pages,
      });
      lines.push(
        `${job.decision.route.padEnd(8)}${String(job.pages ?? '?').padStart(6)} pages  ${job.input.file}  (${job.decision.why})`,
      );
    } else if (job.action === 'resume') {
      const submitted = job.prior?.fact === 'submitted' ? job.prior : undefined;
      entries.set(job.input.realPath, {
        ...pendingRecord(
          { file: job.input.file, document_id: submitted?.document_id ?? null, route: submitted?.route ?? null },
          'submitted earlier: this run would collect it',
          submitted?.page_count ?? null,
        ),
        outcome: 'pending',
        sha256: job.sha256,
      });
      lines.push(
        `${'resume'.padEnd(8)}${'-'.padStart(6)}        ${job.input.file}  (submitted earlier, not charged again)`,
      );
    } else {
      lines.push(
        `${(job.action === 'done' ? 'skip' : 'leave').padEnd(8)}${'-'.padStart(6)}        ${job.input.file}  (${job.action === 'done' ? 'completed earlier' : 'failed earlier; --retry-failed sends it'})`,
      );
    }
  }
  const order = [...unreadableKeys, ...jobs.map((j) => j.input.realPath)];
  const documents = order.map((k) => entries.get(k)).filter((e): e is ReportEntry => e !== undefined);
  const summary = tallySummary(documents, {
    stoppedBy: null,
    message: null,
    elapsedMs: deps.now() - started,
    dryRun: true,
    charges: { reserved: 0, refunded: 0, unknown: 0 },
    ignored,
  });
  deps.stdout.write(
    `${lines.join('\n')}\n${'total'.padEnd(8)}${String(summary.credits_estimate).padStart(6)} credits\n`,
  );
  await writeReport(options.report, summary, deps.cwd);
  printSummary(summary, deps, options);
  return summary;
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
