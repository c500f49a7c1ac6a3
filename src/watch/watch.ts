import { colorLevel } from '../ui/color.ts';
import { normalize, resolve } from 'node:path';
import type { Log } from '../client/deps.ts';
import type { BatchDeps, BatchOptions } from '../batch/options.ts';
import { createReporter } from '../ui/progress.ts';
import { EXIT_CODES, ExtractError } from '../errors.ts';
import { openAppender } from '../outputs/append.ts';
import { checkExplode, prepareOutput, resolveOutput } from '../outputs/index.ts';
import { chokidarEvents, type FolderEvents, type SkipPath, type WatchFolders } from './events.ts';
import { baseOf, checkFolder, listFolders, skipperFor, stampOf } from './folders.ts';
import { type OpenForWriting, openForWriting } from '../open-files.ts';
import { sendSettled } from './send-settled.ts';
import { createSettler } from './settle.ts';
import { createSkipTally } from './skips.ts';
import { emptyFileRule } from '../batch/plan/index.ts';

/** `extract watch` decides these on top of a batch run's options. */
export type WatchOptions = {
  batch: BatchOptions;
  /** A file is sent once its size and mtime have not changed for this long (--settle). */
  settle: number;
  /** Every folder is listed again this often: the safety net for lost events (--rescan). */
  rescan: number;
  /** --no-events: the rescan alone (network shares where events never come). */
  noEvents: boolean;
};

export type WatchDeps = BatchDeps & {
  /** The folders' file events (chokidar by default). */
  watchFolders?: WatchFolders | undefined;
  /** Which of these files a process holds open for writing (Linux /proc; none elsewhere). */
  openForWriting?: OpenForWriting | undefined;
  /** Told once the first listing is in (tests wait for it). */
  ready?: (() => void) | undefined;
};

/** How often files waiting to settle are looked at again, at most. */
const LOOK_MS = 1000;
/** ...and at least this long apart: --settle 0s must not spin. */
const MIN_LOOK_MS = 50;

/**
 * `extract watch <folder...>`: lists the folders, then waits for files to settle (settle.ts),
 * and sends each settled file through runBatch, the batch run's own pipeline, journal and
 * routes, so a watcher and a cron run on one folder pay each document once. Records are
 * appended to the output as documents complete, one log line each. Returns the exit code: 0
 * for a stop by SIGINT/SIGTERM (documents in flight are left resumable by the journal), or
 * what made the watcher stop (a rejected key, the journal, the output).
 */
export async function runWatch(folders: string[], options: WatchOptions, deps: WatchDeps): Promise<number> {
  const batch = options.batch;
  if (folders.length === 0) throw new ExtractError('usage', 'extract watch needs a folder: extract watch ./inbox');
  if (batch.apiKey === undefined || batch.apiKey === '')
    throw new ExtractError(
      'usage',
      'no API key: pass --api-key, set EXTRACT_API_KEY, run "extract config set api_key -", or try --local',
    );
  for (const folder of folders) await checkFolder(folder, deps.cwd);
  const target = resolveOutput({ out: batch.out, format: batch.format, cwd: deps.cwd });
  checkExplode(target, batch.explode);
  await prepareOutput(target);
  const reporter = await createReporter({
    stderr: deps.stderr,
    style: 'plain',
    verbosity: batch.verbosity,
    // A watcher's stderr is a log (a service's journal, a file): colours only when asked for.
    color: colorLevel(batch.color, false, deps.env),
    now: deps.now,
  });
  const log: Log = reporter.log.bind(reporter);
  const base = folders.length === 1 ? resolve(deps.cwd, folders[0]!) : baseOf(folders, deps.cwd);
  const appender = await openAppender(target, {
    cwd: deps.cwd,
    stdout: deps.stdout,
    base,
    explode: batch.explode,
    formulaProtection: !batch.noFormulaProtection,
    warn: (m) => log('warn', m),
  });

  const roots = folders.map((f) => resolve(deps.cwd, f));
  const settler = createSettler(options.settle, deps.now);
  const skip = skipperFor(folders, batch, target, deps);
  const touched = new Set<string>();
  const skips = createSkipTally();
  // An empty file is no document (the batch's rule) unless --all-files: nothing of it is kept.
  const isEmptySkip = (size: number): boolean =>
    emptyFileRule({ size, explicit: false }, batch.allFiles === true) === 'skip';
  let stopping = false;
  const stop = new AbortController();
  let wake = new AbortController();
  const unsubscribe = deps.onSignal?.((signal) => {
    if (!stopping)
      log(
        'info',
        batch.state === null
          ? `${signal}: stopping; no journal is kept (--local without --state): documents in flight are not resumed`
          : `${signal}: stopping; documents in flight are left to the journal, resumed by the next run`,
      );
    stopping = true;
    stop.abort();
    wake.abort();
  });
  let events: FolderEvents | undefined;
  try {
    if (!options.noEvents) {
      events = await _startEvents(
        deps.watchFolders ?? chokidarEvents,
        folders,
        (path, stats) => skip(path) || (stats?.isFile() === true && isEmptySkip(stats.size)),
        {
          touched: (path) => {
            touched.add(normalize(path));
            wake.abort();
          },
          gone: (path) => settler.gone(normalize(path)),
          failed: (err) =>
            log(
              'warn',
              `file events failed (${err instanceof Error ? err.message : String(err)}): new files are still found by the rescan every ${options.rescan / 1000} s`,
            ),
        },
        log,
      );
    }
    log(
      'info',
      `watching ${folders.join(', ')}: files are sent once unchanged for ${options.settle / 1000} s; every folder is listed again every ${options.rescan / 1000} s`,
    );
    const isOpen = deps.openForWriting ?? openForWriting;
    let nextRescan = deps.now();
    let first = true;
    while (!stopping) {
      if (deps.now() >= nextRescan) {
        const listed = await listFolders(
          folders,
          batch,
          deps,
          log,
          (file, size) => {
            if (skip(file)) return false;
            if (!isEmptySkip(size)) return true;
            skips.add(file, 'inode/x-empty');
            return false;
          },
          stop.signal,
        );
        for (const file of listed ?? []) touched.add(file);
        // Files gone without an event (a network share) are forgotten: a watcher running for months does not grow.
        if (listed !== undefined) settler.keepOnly(new Set(listed));
        nextRescan = deps.now() + options.rescan;
        if (first) deps.ready?.();
        first = false;
      }
      const looks = new Set([...touched, ...settler.waiting()]);
      touched.clear();
      for (const path of looks) {
        // A stop is heard between two looks, not after a folder of them.
        if (stopping) break;
        const stamp = await stampOf(resolve(deps.cwd, path));
        if (stamp === undefined) settler.gone(path);
        // Counted, and nothing kept of it, so a folder of them costs the watcher no memory;
        // written to later, an event or the rescan sees it.
        else if (isEmptySkip(stamp.size)) {
          settler.gone(path);
          skips.add(path, 'inode/x-empty');
        } else settler.seen(path, stamp);
      }
      skips.flush(log);
      let ready = settler.settled();
      if (ready.length > 0) {
        // A file still open for writing waits, whatever its stamp says (a writer that pauses).
        const open = await isOpen(ready.map((r) => resolve(deps.cwd, r.path)));
        for (const r of ready.filter((r) => open.has(resolve(deps.cwd, r.path)))) {
          log('debug', `${r.path}: still open for writing; waiting`);
          settler.forget(r.path);
          settler.seen(r.path, r.stamp);
        }
        ready = ready.filter((r) => !open.has(resolve(deps.cwd, r.path)));
      }
      if (ready.length > 0) {
        const code = await sendSettled(ready, { batch, folders, roots, deps, log, appender, settler, skips });
        skips.flush(log);
        if (code === 'stopped') stopping = true;
        else if (code !== undefined) return code;
        continue;
      }
      if (stopping) break;
      wake = new AbortController();
      const idle =
        settler.waiting().length > 0
          ? Math.max(MIN_LOOK_MS, Math.min(LOOK_MS, options.settle))
          : nextRescan - deps.now();
      if (touched.size === 0) await deps.sleep(Math.max(0, Math.min(idle, nextRescan - deps.now())), wake.signal);
    }
    if (batch.state !== null)
      log('info', 'stopped: every document sent is in the journal; a restart resumes what was in flight');
    return EXIT_CODES.ok;
  } finally {
    unsubscribe?.();
    await events?.close();
  }
}

async function _startEvents(
  watchFolders: WatchFolders,
  folders: string[],
  skip: SkipPath,
  on: Parameters<WatchFolders>[2],
  log: Log,
): Promise<FolderEvents | undefined> {
  try {
    return await watchFolders(folders, skip, on);
  } catch (err) {
    on.failed(err);
    log('debug', 'without file events, only the rescan finds new files');
    return undefined;
  }
}
