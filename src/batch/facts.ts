import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
  statSync,
} from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { errnoCode } from '../errno.ts';
import { detectFileType } from '../mime/detect.ts';
import { stampOf, type FileStamp } from './discover.ts';
import { fromBytes, isInside, printable, printableBase, type FsPath } from './paths.ts';
import { inert } from '../inert.ts';

const BYTES = { encoding: 'buffer' } as const;

/** What the pipeline learns about a file before sending it: its identity and its type. */
export type FileFacts = { sha256: string; mimeType: string };

/** The content facts of one read, and the stat of the descriptor it read through (`read`). */
export type ReadFacts = FileFacts & { read: FileStamp };

/** The largest read: big files stream through one buffer of this size, reused. */
const CHUNK_BYTES = 1024 * 1024;
/** file-type needs at most a few KB of the head to recognise any format it knows. */
const SNIFF_BYTES = 4100;

/**
 * How a file of the batch is opened: O_NOFOLLOW, so a file replaced by a symbolic link after
 * the walk is not read through it; the descriptor's fstat is what the read stands for, compared
 * with the walk's stamp where it matters.
 *
 * `within`: the real folder a file found by a walk, a pattern or `extract watch` must be in when
 * it is read (absent for a file the user named, and with --follow-links). Drop folders are written
 * by others, who can swap a file the walk saw for a link, or a folder on its path for a link to
 * one elsewhere, between the walk and the read: a link is followed only where the walk's rule
 * would (its target inside `within`), and the descriptor itself must be inside `within`, which
 * catches a folder swapped on the way. A file named by its link is opened at its target.
 */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/** A file found in a folder that is no longer there when read (a link planted since the walk). */
class OutsideFolder extends Error {}

function linkTarget(path: FsPath, err: unknown, within: FsPath | undefined): FsPath {
  if (errnoCode(err) !== 'ELOOP') throw err;
  const target = realpathSync.native(path);
  if (within !== undefined && !isInside(target, within))
    throw new OutsideFolder(
      `a symbolic link that leads outside the folder it was found in (to ${inert(printable(target))}), planted since it was found: not followed (--follow-links follows it)`,
    );
  return target;
}

/**
 * Where the file open on `fd` is now: Linux names it in /proc/self/fd (no race: it is the
 * descriptor's own); elsewhere the real path of the name it was opened by, if that name still
 * reaches the same file.
 */
function openedAt(fd: number, path: FsPath, info: Stats): FsPath | undefined {
  try {
    const at = fromBytes(readlinkSync(`/proc/self/fd/${fd}`, BYTES));
    return typeof at === 'string' && info.nlink === 0 ? at.replace(/ \(deleted\)$/, '') : at;
  } catch {
    try {
      const real = realpathSync.native(path);
      const now = statSync(real);
      return now.ino === info.ino && now.dev === info.dev ? real : undefined;
    } catch {
      return undefined;
    }
  }
}

function checkWithin(fd: number, path: FsPath, within: FsPath | undefined, info: Stats): void {
  if (within === undefined) return;
  const at = openedAt(fd, path, info);
  if (at === undefined || !isInside(at, within))
    throw new OutsideFolder(
      `not inside the folder it was found in any more${at === undefined ? '' : ` (it is at ${inert(printable(at))})`}: a folder on its path was replaced by a symbolic link since it was found; not read (--follow-links reads it)`,
    );
}

function openInputSync(path: FsPath, within: FsPath | undefined): { fd: number; info: Stats } {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (err) {
    fd = openSync(linkTarget(path, err, within), READ_FLAGS);
  }
  try {
    const info = fstatSync(fd);
    checkWithin(fd, path, within, info);
    return { fd, info };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** A file of the batch opened for a read of many steps (a large hash, a PUT): see READ_FLAGS. */
export async function openInput(path: FsPath, within?: FsPath): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, READ_FLAGS);
  } catch (err) {
    handle = await open(linkTarget(path, err, within), READ_FLAGS);
  }
  try {
    if (within !== undefined) checkWithin(handle.fd, path, within, await handle.stat());
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** A whole file, read through one descriptor, with the stat of that descriptor (its size, not the walk's). */
export function readWhole(path: FsPath, within?: FsPath): { bytes: Buffer; read: FileStamp } {
  const { fd, info } = openInputSync(path, within);
  try {
    const read = stampOf(info);
    return { bytes: readFileSync(fd), read };
  } finally {
    closeSync(fd);
  }
}

/** The sha256 of bytes, as the journal keys content. */
export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The sha256 of the content (the journal's key, so a renamed or moved file is still
 * recognised) and the MIME type from the content's head, then the extension; never from the
 * extension alone. One open and one pass per file, with a buffer no larger than the file:
 * a rerun over 20,000 small files must cost about what hashing them does.
 */
export async function fileFacts(path: FsPath, size: number, within?: FsPath): Promise<ReadFacts> {
  if (size < CHUNK_BYTES) {
    // A small file in one synchronous read: a rerun over thousands of them is bound by
    // syscalls, and the thread pool's round trips cost more than the reads themselves.
    const { bytes, read } = readWhole(path, within);
    return {
      sha256: sha256Of(bytes),
      mimeType: await detectFileType(bytes.subarray(0, SNIFF_BYTES), printableBase(path)),
      read,
    };
  }
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(Math.max(SNIFF_BYTES, Math.min(size + 1, CHUNK_BYTES)));
  const handle = await openInput(path, within);
  let head: Uint8Array | undefined;
  let read: FileStamp;
  try {
    read = stampOf(await handle.stat());
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (head === undefined) head = Buffer.from(buffer.subarray(0, Math.min(bytesRead, SNIFF_BYTES)));
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return {
    sha256: hash.digest('hex'),
    mimeType: await detectFileType(head ?? new Uint8Array(0), printableBase(path)),
    read,
  };
}

/** The sha256 of a descriptor's first `size` bytes (a PUT the storage answered before it took them all). */
export async function hashOf(handle: FileHandle, size: number): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(size, CHUNK_BYTES)));
  for (let at = 0; at < size; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - at), at);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    at += bytesRead;
  }
  return hash.digest('hex');
}

/**
 * The MIME type alone, from the head of the content (a large file sent by upload is hashed
 * while it is sent, not before: see the pipeline's one read pass).
 */
export async function fileType(path: FsPath, within?: FsPath): Promise<string> {
  const head = Buffer.allocUnsafe(SNIFF_BYTES);
  const { fd } = openInputSync(path, within);
  let n: number;
  try {
    n = readSync(fd, head, 0, SNIFF_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  return detectFileType(head.subarray(0, n), printableBase(path));
}
