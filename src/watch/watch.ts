import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join, matchesGlob, normalize, relative, resolve, sep } from 'node:path';
import { Writable } from 'node:stream';
import type { Log } from '../client/deps.ts';
import { discoverInputs } from '../batch/discover.ts';
import type { BatchDeps, BatchOptions } from '../batch/options.ts';
import { createReporter } from '../batch/progress.ts';
import { runBatch } from '../batch/run.ts';
import { parseStateSpec } from '../batch/state/index.ts';
import { userJournalPath } from '../batch/state/user-journal.ts';
import type { BatchSummary, ReportEntry } from '../batch/summary.ts';
import { EXIT_CODES, ExtractError } from '../errors.ts';
import { type Appender, openAppender } from '../outputs/append.ts';
import { checkExplode, commonBase, prepareOutput, resolveOutput, type OutputTarget } from '../outputs/index.ts';
import { chokidarEvents, type FolderEvents, type WatchFolders } from './events.ts';
import { describeEntry } from './log-line.ts';
import { type OpenForWriting, openForWriting } from './open-files.ts';
import { createSettler, type FileStamp, type Settler } from './settle.ts';

/** `extract watch` decides these on top of a batch run's options. */
export type WatchOptions = {
  batch: BatchOptions;
  /** A file is sent once its size and mtime have not changed for this long (--settle). */
  settleMs: number;
  /** Every folder is listed again this often: the safety net for lost events (--rescan). */
  rescanMs: number;
  /** false for --no-events: the rescan alone (network shares where events never come). */
  events: boolean;
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
  for (const folder of folders) await _checkFolder(folder, deps.cwd);
  const target = resolveOutput({ out: batch.out, format: batch.format, cwd: deps.cwd });
  checkExplode(target, batch.explode);
  await prepareOutput(target);
  const reporter = await createReporter({
    stderr: deps.stderr,
    style: 'plain',
    verbosity: batch.verbosity,
    color: false,
    now: deps.now,
  });
  const log: Log = reporter.log.bind(reporter);
  const base = folders.length === 1 ? resolve(deps.cwd, folders[0]!) : _baseOf(folders, deps.cwd);
  const appender = await openAppender(target, {
    cwd: deps.cwd,
    stdout: deps.stdout,
    base,
    explode: batch.explode,
    warn: (m) => log('warn', m),
  });

  const settler = createSettler(options.settleMs, deps.now);
  const skip = _skipper(folders, batch, target, deps);
  const touched = new Set<string>();
  let stopping = false;
  let wake = new AbortController();
  const unsubscribe = deps.onSignal?.((signal) => {
    if (!stopping)
      log('info', `${signal}: stopping; documents in flight are left to the journal, resumed by the next run`);
    stopping = true;
    wake.abort();
  });
  let events: FolderEvents | undefined;
  try {
    if (options.events) {
      events = await _startEvents(
        deps.watchFolders ?? chokidarEvents,
        folders,
        skip,
        {
          touched: (path) => {
            touched.add(normalize(path));
            wake.abort();
          },
          gone: (path) => settler.gone(normalize(path)),
          failed: (err) =>
            log(
              'warn',
              `file events failed (${err instanceof Error ? err.message : String(err)}): new files are still found by the rescan every ${options.rescanMs / 1000} s`,
            ),
        },
        log,
      );
    }
    log(
      'info',
      `watching ${folders.join(', ')}: files are sent once unchanged for ${options.settleMs / 1000} s; every folder is listed again every ${options.rescanMs / 1000} s`,
    );
    const isOpen = deps.openForWriting ?? openForWriting;
    let nextRescan = deps.now();
    let first = true;
    while (!stopping) {
      if (deps.now() >= nextRescan) {
        for (const file of await _list(folders, batch, deps, log)) if (!skip(file)) touched.add(file);
        nextRescan = deps.now() + options.rescanMs;
        if (first) deps.ready?.();
        first = false;
      }
      const looks = new Set([...touched, ...settler.waiting()]);
      touched.clear();
      for (const path of looks) {
        const stamp = await _stampOf(resolve(deps.cwd, path));
        if (stamp === undefined) settler.gone(path);
        else settler.seen(path, stamp);
      }
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
        const code = await _sendSettled(ready, { batch, deps, log, appender, settler });
        if (code === 'stopped') stopping = true;
        else if (code !== undefined) return code;
        continue;
      }
      if (stopping) break;
      wake = new AbortController();
      const idle = settler.waiting().length > 0 ? Math.min(LOOK_MS, options.settleMs) : nextRescan - deps.now();
      if (touched.size === 0) await deps.sleep(Math.max(0, Math.min(idle, nextRescan - deps.now())), wake.signal);
    }
    log('info', 'stopped: every document sent is in the journal; a restart resumes what was in flight');
    return EXIT_CODES.ok;
  } finally {
    unsubscribe?.();
    await events?.close();
  }
}

type SendContext = {
  batch: BatchOptions;
  deps: WatchDeps;
  log: Log;
  appender: Appender;
  settler: Settler;
};

/**
 * One batch run over the files that settled. Records go to the output as documents complete;
 * a document an earlier run completed is written only if the output lacks it. Returns an exit
 * code when the watcher must stop, 'stopped' for a signal, undefined to go on watching.
 */
async function _sendSettled(
  ready: Array<{ path: string; stamp: FileStamp }>,
  ctx: SendContext,
): Promise<number | 'stopped' | undefined> {
  const { batch, deps, log, appender, settler } = ctx;
  let writing: Promise<void> = Promise.resolve();
  const gone = new Set<string>();
  let outputFailed: unknown;
  const onRecord = (entry: ReportEntry): void => {
    // Moved or deleted between its last look and the run (another run's --move-done): nothing to record.
    if (entry.outcome === 'unreadable' && !existsSync(resolve(deps.cwd, entry.file))) {
      log('debug', `${entry.file}: gone before it was sent`);
      gone.add(entry.file);
      return;
    }
    const known = entry.outcome === 'skipped' || entry.outcome === 'left' || entry.outcome === 'other_worker';
    const write =
      !(entry.outcome === 'pending' || entry.outcome === 'not_submitted') && !(known && appender.holds(entry));
    const line = describeEntry(entry, write);
    log(line.level, line.text);
    if (!write) return;
    writing = writing.then(async () => {
      if (outputFailed !== undefined) return;
      try {
        await appender.append([entry]);
      } catch (err) {
        outputFailed = err;
      }
    });
  };
  let summary: BatchSummary;
  try {
    summary = await runBatch(
      ready.map((r) => r.path),
      { ...batch, out: '-', format: 'jsonl', report: undefined, dryRun: false, asFound: true },
      {
        ...deps,
        // The batch's own records and lines are for a one-off run: the watcher writes its own.
        stdout: _discard(),
        stderr: batch.verbosity === 'verbose' ? deps.stderr : _discard(),
        isTTY: false,
        onRecord,
      },
    );
  } catch (err) {
    // Every file vanished between its last look and the run (moved away, deleted).
    if (err instanceof ExtractError && err.code === 'no_input') {
      for (const r of ready) settler.gone(r.path);
      return undefined;
    }
    throw err;
  } finally {
    await writing;
  }
  if (outputFailed !== undefined) {
    if (outputFailed instanceof ExtractError) {
      log('error', outputFailed.message);
      return EXIT_CODES.output;
    }
    throw outputFailed;
  }
  const byFile = new Map(summary.documents.map((d) => [d.file, d.outcome]));
  for (const n of summary.not_documents) {
    log('info', `${n.file}: not a PDF or an image (${n.type}): skipped, uncharged (--all-files sends it)`);
    byFile.set(n.file, 'skipped');
  }
  for (const r of ready) {
    if (gone.has(r.path)) {
      settler.gone(r.path);
      continue;
    }
    const outcome = byFile.get(r.path);
    // Still processing, or never sent (a stop): looked at again at the next rescan.
    if (outcome === undefined || outcome === 'pending' || outcome === 'not_submitted') settler.forget(r.path);
    else settler.handled(r.path, r.stamp);
  }
  return _afterStop(summary, log);
}

function _afterStop(summary: BatchSummary, log: Log): number | 'stopped' | undefined {
  const message = summary.message ?? String(summary.stopped_by);
  switch (summary.stopped_by) {
    case null:
      return undefined;
    case 'interrupted':
      return 'stopped';
    case 'auth':
      log('error', message);
      return EXIT_CODES.auth;
    case 'journal':
      log('error', message);
      return EXIT_CODES.state;
    case 'wrong_service':
      log('error', message);
      return EXIT_CODES.usage;
    default:
      // Out of credits, --max-credits, an outage: the files wait for the next rescan.
      log('warn', `${message}; the files not sent are tried again at the next rescan`);
      return undefined;
  }
}

async function _startEvents(
  watchFolders: WatchFolders,
  folders: string[],
  skip: (path: string) => boolean,
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

/** Every file the batch's own walk finds in the folders (hidden names, --ignore, links as a batch run). */
async function _list(folders: string[], batch: BatchOptions, deps: WatchDeps, log: Log): Promise<string[]> {
  try {
    const found = await discoverInputs(folders, {
      cwd: deps.cwd,
      ignore: batch.ignore,
      followLinks: batch.followLinks,
    });
    for (const u of found.unreadable) log('warn', u.reason);
    return found.files.map((f) => normalize(f.file));
  } catch (err) {
    if (!(err instanceof ExtractError)) throw err;
    log('warn', `${err.message}; listing again in the next rescan`);
    return [];
  }
}

/**
 * What the watcher never sends: hidden names (as a batch run's walk), paths --ignore matches,
 * its own outputs and the journal (when they sit in a watched folder).
 */
function _skipper(
  folders: string[],
  batch: BatchOptions,
  target: OutputTarget,
  deps: WatchDeps,
): (path: string) => boolean {
  // Paths, each with what follows it: a folder's files (sep), a journal's companions ('').
  const own: Array<{ path: string; below: string }> = [];
  if (target.kind === 'file') own.push({ path: target.path, below: '' });
  if (target.kind === 'dir') own.push({ path: target.path, below: sep });
  if (batch.report !== undefined && batch.report !== '-')
    own.push({ path: resolve(deps.cwd, batch.report), below: '' });
  if (batch.state !== null) {
    const spec =
      batch.state === undefined
        ? { kind: 'sqlite' as const, path: userJournalPath(deps.env, batch.baseUrl) }
        : parseStateSpec(batch.state, deps.cwd);
    // The journal's companions (-wal, -shm, .lock, .stat-cache) start with its name.
    if (spec.kind !== 'postgres') own.push({ path: spec.path, below: '' });
  }
  const roots = folders.map((f) => resolve(deps.cwd, f));
  return (path) => {
    const full = resolve(deps.cwd, path);
    if (own.some((o) => full === o.path || full.startsWith(o.path + o.below))) return true;
    const root = roots.find((r) => full === r || full.startsWith(r + sep));
    if (root === undefined) return false;
    const rel = relative(root, full);
    if (rel === '') return false;
    if (rel.split(sep).some((part) => part.startsWith('.'))) return true;
    return batch.ignore.some((pattern) => matchesGlob(rel, pattern) || matchesGlob(rel, `**/${pattern}`));
  };
}

async function _checkFolder(folder: string, cwd: string): Promise<void> {
  const info = await stat(resolve(cwd, folder)).catch(() => undefined);
  if (info === undefined)
    throw new ExtractError('usage', `${folder}: no such folder: create it, or name the folder files are dropped into`);
  if (!info.isDirectory())
    throw new ExtractError(
      'usage',
      `${folder} is not a folder: extract watch watches folders; to extract one file, run extract ${folder}`,
    );
}

function _baseOf(folders: string[], cwd: string): string {
  return commonBase(
    folders.map((f) => join(resolve(cwd, f), 'x')),
    cwd,
  );
}

async function _stampOf(path: string): Promise<FileStamp | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

function _discard(): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}
