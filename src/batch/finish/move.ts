import type { Stats } from 'node:fs';
import {
  type FileHandle,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  stat,
  unlink,
  utimes,
} from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, normalize, resolve, sep } from 'node:path';
import { stampOf, type FileStamp } from '../discover.ts';
import { errnoCode, processAlive, describeFsError } from '../../errno.ts';
import { ExtractError } from '../../errors.ts';
import { openInput } from '../facts.ts';
import { inert } from '../../inert.ts';
import type { FsPath } from '../paths.ts';
import type { ReportEntry } from '../summary.ts';

/**
 * --move-done DIR and --move-failed DIR: a document's file leaves the drop folder once its
 * record is safe (the journal's fact is fdatasync'd and the outputs are written; the caller
 * decides when that is: the batch after its outputs, `extract watch` after each record). The
 * journal knows documents by content, so a moved file dropped back in is recognised and costs
 * nothing.
 *
 * Never lost, never overwriting: the file is linked under its new name (link(2) fails rather
 * than replace a name that exists, so a clash is found without a race and the next suffix tried),
 * the folder synced, and only then the old name removed. Across file systems (EXDEV) it is
 * copied to a hidden temporary name beside the target, synced, linked into place the same way,
 * and the original removed last. A crash at any point leaves the file where it was, or in both
 * places; never in neither. fs-extra's and move-file's `move` check for an existing target with
 * a stat and then rename, which replaces a file that appears in between; hence this module.
 *
 * Only what was read is moved: the file must still be the one whose content the record is of
 * (device, inode, size, modification and change times as the run read it). A file rewritten or
 * replaced since (a rename over it while its document was in flight, a scan still being
 * written) stays where it is for the next run, which reads it again: it is never moved unsent.
 */

export type MoveFolders = {
  /** --move-done: where completed documents go (this run's, earlier runs', other workers'). */
  done?: string | undefined;
  /** --move-failed: where failures that fail again go (set aside: cost/rerun.ts failsAgain). */
  failed?: string | undefined;
};

/**
 * What became of one file: moved (where to), kept in place by an error (why), or left in place
 * because it is no longer the file that was read (`changed`: a line to show after its name; not an error).
 */
export type MoveResult = { moved_to: string } | { move_error: string } | { changed: string };

/** The folder a finished document's file goes to, if any. Pending, unsent and retryable failures stay. */
export function folderFor(entry: Pick<ReportEntry, 'outcome' | 'status' | 'set_aside'>, folders: MoveFolders) {
  if (entry.status === 'completed' && ['completed', 'skipped', 'other_worker'].includes(entry.outcome))
    return folders.done;
  if (entry.set_aside === true && (entry.outcome === 'failed' || entry.outcome === 'left')) return folders.failed;
  return undefined;
}

/**
 * The move folders, checked when the run starts: a mistyped one is one usage error before
 * anything is paid for, not an error per file after the work. moveInto still checks each time
 * (the folder can go away while the run works).
 */
export async function checkMoveFolders(folders: MoveFolders, cwd: string): Promise<void> {
  for (const [flag, folder] of [
    ['--move-done', folders.done],
    ['--move-failed', folders.failed],
  ] as const) {
    if (folder === undefined) continue;
    const info = await stat(resolve(cwd, folder)).catch(() => undefined);
    const shown = inert(folder);
    if (info === undefined)
      throw new ExtractError(
        'usage',
        `${flag} ${shown}: no such folder: create it (mkdir ${shown}) or name another, then rerun; nothing was sent`,
      );
    if (!info.isDirectory())
      throw new ExtractError('usage', `${flag} ${shown} is not a folder: name a folder, then rerun; nothing was sent`);
  }
}

/**
 * Moves `from` to `folder/rel` (`rel`: its path under the folder it was found in), the folders
 * under `folder` made as needed. A name that exists gets the first free suffix: `a.pdf`, then
 * `a (1).pdf`, `a (2).pdf`. `folder` itself must exist: a mistyped folder is an error for the
 * file (it stays where it is), not a new folder somewhere unexpected.
 */
export async function moveInto(
  from: FsPath,
  folder: string,
  rel: string,
  cwd: string,
  read: FileStamp | undefined,
): Promise<MoveResult> {
  const root = resolve(cwd, folder);
  const shown = (path: string) => (isAbsolute(folder) ? path : join(folder, path.slice(root.length + 1)));
  const safeRel = insideRel(rel);
  const changed = {
    changed: `changed after it was read (rewritten or replaced): left where it is, not moved to ${inert(folder)}; the next run reads it again`,
  };
  try {
    if (read === undefined || !(await stillRead(from, read))) return changed;
    const info = await stat(root).catch((err: unknown) => {
      throw new MoveError(`${folder} does not exist (${describeFsError(err)}): create it, then rerun`);
    });
    if (!info.isDirectory()) throw new MoveError(`${folder} is not a folder: name a folder, then rerun`);
    const dir = await folderInside(root, dirname(safeRel), shown);
    const target = join(dir, basename(safeRel));
    await removeStaleCopies(dir);
    const placed = await placeWithoutOverwriting(from, target, read, await realpath(dir));
    if (placed === undefined) return changed;
    return { moved_to: shown(placed) };
  } catch (err) {
    const why = err instanceof MoveError ? err.message : `${describeFsError(err)}: make ${folder} writable, then rerun`;
    return {
      move_error: `not moved to ${folder}: ${why} (the file stays where it is; its result is kept, so the rerun costs nothing)`,
    };
  }
}

class MoveError extends Error {}

/**
 * The folder `rel` under `root`, made as needed, without following a symbolic link: each part
 * is looked at with lstat (a drop folder's writer can plant `done/sub -> /elsewhere` before the
 * file `sub/NAME` is moved), and a link is refused, so a move never writes outside the folder
 * named. `root` itself is the user's: it may be a link.
 */
async function folderInside(root: string, rel: string, shown: (path: string) => string): Promise<string> {
  let at = root;
  for (const part of rel === '.' ? [] : rel.split(sep)) {
    at = join(at, part);
    let info = await lstat(at).catch((err: unknown) => {
      if (errnoCode(err) !== 'ENOENT') throw err;
      return undefined;
    });
    if (info === undefined) {
      await mkdir(at).catch((err: unknown) => {
        if (errnoCode(err) !== 'EEXIST') throw err;
      });
      info = await lstat(at);
    }
    if (info.isSymbolicLink()) {
      const to = await readlink(at).catch(() => undefined);
      throw new MoveError(
        `${inert(shown(at))} is a symbolic link${to === undefined ? '' : ` (to ${inert(to)})`}: a move never follows one; remove it, then rerun`,
      );
    }
    if (!info.isDirectory()) throw new MoveError(`${inert(shown(at))} is not a folder: remove it, then rerun`);
  }
  return at;
}

/**
 * After the link: the folder the file landed in is still the one checked (a folder swapped for
 * a link between the check and the link is caught here, and the name made through it removed).
 */
async function checkLanded(placed: string, realDir: string): Promise<void> {
  if ((await realpath(dirname(placed)).catch(() => undefined)) === realDir) return;
  await unlink(placed).catch(() => {});
  throw new MoveError(
    `${inert(dirname(placed))} was replaced by a symbolic link during the move: not moved there; rerun`,
  );
}

/**
 * Whether a stat is of the file as it was read. The change time only before the file is linked
 * anywhere: link(2) itself sets it.
 */
function sameFile(info: Stats, read: FileStamp, ctime = true): boolean {
  const [size, mtime, changed, ino, dev] = read.split(':');
  const now = stampOf(info).split(':');
  return now[0] === size && now[1] === mtime && (!ctime || now[2] === changed) && now[3] === ino && now[4] === dev;
}

async function stillRead(path: FsPath, read: FileStamp): Promise<boolean> {
  const info = await fileAt(path);
  return info?.isFile() === true && sameFile(info, read);
}

/** The file a name stands for now: itself, or a symbolic link's target (a file named by its link); undefined if none. */
async function fileAt(path: FsPath): Promise<Stats | undefined> {
  const info = await lstat(path).catch(() => undefined);
  return info?.isSymbolicLink() === true ? stat(path).catch(() => undefined) : info;
}

/**
 * Removes the temporary copies (`.NAME.moving-PID`) a move across file systems left in `folder`
 * when its process was killed mid-copy: those of processes that are gone. Looked at once per
 * folder a process moves into; a live process's copy (this one's, or a run beside it) is its own.
 */
async function removeStaleCopies(folder: string): Promise<void> {
  if (swept.has(folder)) return;
  swept.add(folder);
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(MOVING.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || processAlive(pid)) continue;
    await unlink(join(folder, name)).catch(() => {});
  }
}

const MOVING = /^\..+\.moving-(\d+)$/;
const swept = new Set<string>();

/** `rel` kept under the folder: no absolute path, no `..` climbing out of it. */
function insideRel(rel: string): string {
  const parts = normalize(rel)
    .split(sep)
    .filter((p) => p !== '' && p !== '.' && p !== '..');
  return parts.length > 0 ? join(...parts) : 'file';
}

/** The n-th name tried for `target`: itself, then `name (n).ext`. */
function suffixed(target: string, n: number): string {
  if (n === 0) return target;
  const ext = extname(target);
  return join(dirname(target), `${basename(target, ext)} (${n})${ext}`);
}

const MOST_SUFFIXES = 10_000;

/**
 * Links `from` under the first free name at `target`, checks the link is of the file that was
 * read (a file replaced between the check and the link is unlinked again: undefined), then
 * removes `from` if it is still that file.
 */
async function placeWithoutOverwriting(
  from: FsPath,
  target: string,
  read: FileStamp,
  realDir: string,
): Promise<string | undefined> {
  try {
    const placed = await linkFree(from, target);
    await checkLanded(placed, realDir);
    const linked = await fileAt(placed);
    if (linked === undefined || !sameFile(linked, read, false)) {
      await unlink(placed);
      return undefined;
    }
    await syncFolder(dirname(placed));
    await unlinkIfStill(from, read);
    return placed;
  } catch (err) {
    if (errnoCode(err) !== 'EXDEV' && !NO_LINKS.has(errnoCode(err) ?? '')) throw err;
  }
  // Another file system (or one without hard links): a synced copy beside the target first, of
  // the descriptor that was checked to be the file read.
  const source = await openInput(from);
  const temp = join(dirname(target), `.${basename(target)}.moving-${process.pid}`);
  try {
    const was = await source.stat();
    if (!sameFile(was, read)) return undefined;
    const handle = await open(temp, 'wx');
    try {
      await copyInto(source, handle);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await utimes(temp, was.atime, was.mtime);
    const placed = await linkFree(temp, target).catch(async (err: unknown) => {
      if (!NO_LINKS.has(errnoCode(err) ?? '')) throw err;
      return renameFree(temp, target);
    });
    await checkLanded(placed, realDir);
    await syncFolder(dirname(placed));
    await unlinkIfStill(from, read);
    return placed;
  } finally {
    await source.close();
    await unlink(temp).catch(() => {});
  }
}

/** The descriptor's bytes into the new file, through one reused buffer (both stay open: their owners close them). */
async function copyInto(source: FileHandle, target: FileHandle): Promise<void> {
  const buffer = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
  for (let at = 0; ; ) {
    const { bytesRead } = await source.read(buffer, 0, buffer.length, at);
    if (bytesRead === 0) return;
    for (let written = 0; written < bytesRead; )
      written += (await target.write(buffer, written, bytesRead - written)).bytesWritten;
    at += bytesRead;
  }
}

const COPY_CHUNK_BYTES = 1024 * 1024;

/**
 * The old name goes only if it still names the file moved: one renamed over it since is a new
 * file, which stays (the moved one is in both places for a moment, never in neither).
 */
async function unlinkIfStill(from: FsPath, read: FileStamp): Promise<void> {
  const info = await fileAt(from);
  const [, , , ino, dev] = read.split(':');
  if (info !== undefined && String(info.ino) === ino && String(info.dev) === dev) await unlink(from);
}

/** File systems that refuse hard links (FAT, some FUSE and network shares). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);

async function linkFree(from: FsPath, target: string): Promise<string> {
  for (let n = 0; n < MOST_SUFFIXES; n++) {
    const name = suffixed(target, n);
    try {
      await link(from, name);
      return name;
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
  }
  throw new MoveError(`${MOST_SUFFIXES} files already hold the name ${basename(target)}: clear some, then rerun`);
}

/** Without hard links: the first free name, checked then renamed (a file that appears in between may be replaced). */
async function renameFree(from: string, target: string): Promise<string> {
  for (let n = 0; n < MOST_SUFFIXES; n++) {
    const name = suffixed(target, n);
    const taken = await stat(name).then(
      () => true,
      () => false,
    );
    if (taken) continue;
    await rename(from, name);
    return name;
  }
  throw new MoveError(`${MOST_SUFFIXES} files already hold the name ${basename(target)}: clear some, then rerun`);
}

/** The new name on disk before the old one goes. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
