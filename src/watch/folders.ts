import { stat } from 'node:fs/promises';
import { join, matchesGlob, normalize, relative, resolve, sep } from 'node:path';
import type { Log } from '../client/deps.ts';
import { streamInputs, folderExclusions } from '../batch/discover/index.ts';
import type { BatchOptions } from '../batch/options.ts';
import { parseStateSpec } from '../journal/state/index.ts';
import { userJournalPath } from '../journal/state/user-journal.ts';
import { ExtractError } from '../errors.ts';
import { commonBase, type OutputTarget } from '../outputs/index.ts';
import type { FileStamp } from './settle.ts';

/** The watched folders: checked, listed (the rescan), and what in them is never sent. */

/**
 * Every file the batch's own walk finds in the folders (hidden names, --ignore, links as a batch
 * run) that `keep` keeps, given its size: the walk is read a chunk at a time, so what the watcher
 * leaves out (a folder of 100,000 empty files) is never held as a list.
 */
export async function listFolders(
  folders: string[],
  batch: BatchOptions,
  deps: { cwd: string; env: Record<string, string | undefined> },
  log: Log,
  keep: (file: string, size: number) => boolean,
  /** A stop: the listing ends between two chunks, and is no listing (undefined). */
  stop?: AbortSignal,
): Promise<string[] | undefined> {
  try {
    // Move folders inside a watched folder are not walked, as in a batch run.
    const moved = folderExclusions({ done: batch.moveDone, failed: batch.moveFailed }, deps.cwd);
    const { chunks, found } = streamInputs(folders, {
      cwd: deps.cwd,
      ignore: [...batch.ignore, ...moved],
      followLinks: batch.followLinks,
    });
    const kept: string[] = [];
    for await (const chunk of chunks) {
      if (stop?.aborted === true) return undefined;
      for (const f of chunk) {
        const file = normalize(f.file);
        if (keep(file, f.size)) kept.push(file);
      }
    }
    for (const u of found.unreadable) log('warn', u.reason);
    return kept;
  } catch (err) {
    if (!(err instanceof ExtractError)) throw err;
    log('warn', `${err.message}; listing again in the next rescan`);
    return undefined;
  }
}

/**
 * What the watcher never sends: hidden names (as a batch run's walk), paths --ignore matches,
 * its own outputs and the journal (when they sit in a watched folder).
 */
export function skipperFor(
  folders: string[],
  batch: BatchOptions,
  target: OutputTarget,
  deps: { cwd: string; env: Record<string, string | undefined> },
): (path: string) => boolean {
  // Paths, each with what follows it: a folder's files (sep), a journal's companions ('').
  const own: Array<{ path: string; below: string }> = [];
  if (target.kind === 'file') own.push({ path: target.path, below: '' });
  if (target.kind === 'dir') own.push({ path: target.path, below: sep });
  // --move-done/--move-failed folders inside a watched folder: what is moved there is done.
  for (const dir of [batch.moveDone, batch.moveFailed])
    if (dir !== undefined) own.push({ path: resolve(deps.cwd, dir), below: sep });
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
    if (batch.hidden !== true && rel.split(sep).some((part) => part.startsWith('.'))) return true;
    return batch.ignore.some((pattern) => matchesGlob(rel, pattern) || matchesGlob(rel, `**/${pattern}`));
  };
}

export async function checkFolder(folder: string, cwd: string): Promise<void> {
  const info = await stat(resolve(cwd, folder)).catch(() => undefined);
  if (info === undefined)
    throw new ExtractError('usage', `${folder}: no such folder: create it, or name the folder files are dropped into`);
  if (!info.isDirectory())
    throw new ExtractError(
      'usage',
      `${folder} is not a folder: extract watch watches folders; to extract one file, run extract ${folder}`,
    );
}

export function baseOf(folders: string[], cwd: string): string {
  return commonBase(
    folders.map((f) => join(resolve(cwd, f), 'x')),
    cwd,
  );
}

export async function stampOf(path: string): Promise<FileStamp | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}
