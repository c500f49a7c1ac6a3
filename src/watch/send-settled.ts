import { existsSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import type { Log } from '../client/deps.ts';
import type { BatchDeps, BatchOptions } from '../batch/options.ts';
import { folderFor, moveInto } from '../batch/finish/index.ts';
import type { FileStamp as ReadStamp } from '../batch/discover.ts';
import { inert } from '../inert.ts';
import { runBatch } from '../batch/run.ts';
import { releaseSummary, type BatchSummary, type ReportEntry } from '../batch/summary.ts';
import { EXIT_CODES, ExtractError } from '../errors.ts';
import type { Appender } from '../outputs/append.ts';
import { discarded } from '../outputs/stream.ts';
import { describeEntry } from './log-line.ts';
import type { FileStamp, Settler } from './settle.ts';
import type { SkipTally } from './skips.ts';

/** The send step of `extract watch`: one batch run (runBatch) over the files that settled. */

export type SendContext = {
  batch: BatchOptions;
  /** The watched folders, as named: a file sent is kept to the one it was found in. */
  folders: string[];
  /** The watched folders, resolved: a moved file keeps its path under the one it was found in. */
  roots: string[];
  /** The batch run's own (a watcher's are a batch run's and more). */
  deps: BatchDeps;
  log: Log;
  appender: Appender;
  settler: Settler;
  /** Files that are not documents: counted, said as one line per pass. */
  skips: SkipTally;
};

/**
 * One batch run over the files that settled. Records go to the output as documents complete;
 * a document an earlier run completed is written only if the output lacks it. Returns an exit
 * code when the watcher must stop, 'stopped' for a signal, undefined to go on watching.
 */
export async function sendSettled(
  ready: Array<{ path: string; stamp: FileStamp }>,
  ctx: SendContext,
): Promise<number | 'stopped' | undefined> {
  const { batch, deps, log, appender, settler } = ctx;
  const moves = { done: batch.moveDone, failed: batch.moveFailed };
  let writing: Promise<void> = Promise.resolve();
  const gone = new Set<string>();
  let outputFailed: unknown;
  const containerOf = containersIn(ready);
  const onRecord = (entry: ReportEntry, read?: ReadStamp): void => {
    const container = containerOf(entry.file);
    // Moved or deleted between its last look and the run (another run's --move-done): nothing to record.
    if (container === undefined && entry.outcome === 'unreadable' && !existsSync(resolve(deps.cwd, entry.file))) {
      log('debug', `${entry.file}: gone before it was sent`);
      gone.add(entry.file);
      return;
    }
    // The watcher's caller (--json) hears every document's record as it ends, written or known.
    deps.onRecord?.(entry, read);
    const known = entry.outcome === 'skipped' || entry.outcome === 'left' || entry.outcome === 'other_worker';
    const write =
      !(entry.outcome === 'pending' || entry.outcome === 'not_submitted') && !(known && appender.holds(entry));
    const line = describeEntry(entry, write);
    log(line.level, line.text);
    // A part of an archive or a mail (src/inputs/) is not a file to move: its container stays in the folder.
    const folder = container === undefined ? folderFor(entry, moves) : undefined;
    if (!write && folder === undefined) return;
    writing = writing.then(async () => {
      if (outputFailed !== undefined) return;
      try {
        if (write) await appender.append([entry]);
      } catch (err) {
        outputFailed = err;
        return;
      }
      // Moved only once its record is written (appended and synced, or already in the output).
      if (folder !== undefined) await _move(entry, folder, ctx, read);
    });
  };
  let summary: BatchSummary;
  try {
    summary = await runBatch(
      ready.map((r) => r.path),
      {
        ...batch,
        out: '-',
        format: 'jsonl',
        report: undefined,
        review: undefined,
        dryRun: false,
        asFound: ctx.folders,
        // The watcher settled these files by its own looks, and moves each one after its record.
        settle: 0,
        moveDone: undefined,
        moveFailed: undefined,
      },
      {
        ...deps,
        // The batch's own records and lines are for a one-off run: the watcher writes its own.
        stdout: discarded(),
        stderr: batch.verbosity === 'verbose' ? deps.stderr : discarded(),
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
    releaseSummary(summary);
    if (outputFailed instanceof ExtractError) {
      log('error', outputFailed.message);
      return EXIT_CODES.output;
    }
    throw outputFailed;
  }
  const byFile = new Map(summary.documents.map((d) => [d.file, d.outcome]));
  // A container is handled as its parts are: still pending while one of them is.
  for (const d of summary.documents) {
    const container = containerOf(d.file);
    if (container === undefined) continue;
    const unfinished = d.outcome === 'pending' || d.outcome === 'not_submitted';
    if (unfinished || !byFile.has(container)) byFile.set(container, unfinished ? 'pending' : 'completed');
  }
  // The watcher runs on: this cycle's record spool goes now, not at the next collection.
  releaseSummary(summary);
  // A link planted in a folder after the watcher started is left out as the walk leaves it out, once.
  for (const l of summary.links_not_followed) {
    log('warn', `${inert(l.file)}: left out: ${l.reason}`);
    byFile.set(l.file, 'skipped');
  }
  for (const n of summary.not_documents) {
    ctx.skips.add(n.file, n.type);
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

/** --move-done/--move-failed for one document (batch/finish/move.ts); a failure leaves the file where it is and says why. */
async function _move(entry: ReportEntry, folder: string, ctx: SendContext, read: ReadStamp | undefined): Promise<void> {
  const path = resolve(ctx.deps.cwd, entry.file);
  const root = ctx.roots.find((r) => path.startsWith(r + sep)) ?? dirname(path);
  // Only the file as the run read it: one that changed since is read again at the next rescan.
  const result = await moveInto(path, folder, relative(root, path), ctx.deps.cwd, read);
  if ('changed' in result) ctx.log('warn', `${inert(entry.file)}: ${result.changed}`);
  else if ('move_error' in result) ctx.log('error', `${inert(entry.file)}: ${result.move_error}`);
  else ctx.log('info', `${inert(entry.file)}: moved to ${inert(result.moved_to)}`);
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

/** The settled file a document is a part of (`inbox/a.zip` of `inbox/a.zip!b.pdf`), if it is one. */
function containersIn(ready: Array<{ path: string }>): (file: string) => string | undefined {
  const paths = new Set(ready.map((r) => r.path));
  return (file) => {
    for (let at = file.indexOf('!'); at > 0; at = file.indexOf('!', at + 1))
      if (paths.has(file.slice(0, at))) return file.slice(0, at);
    return undefined;
  };
}
