import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { errnoCode } from '../errno.ts';
import { detectMimeType } from '../mime/detect.ts';
import { stampOf, type FileStamp } from './discover.ts';
import { printableBase, type FsPath } from './paths.ts';

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
 * the walk is not read through it. A name the walk found as a link (a file named by its link,
 * --follow-links) is opened at its target, resolved now; either way the descriptor's fstat is
 * what the read stands for, compared with the walk's stamp where it matters.
 */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

function linkTarget(path: FsPath, err: unknown): FsPath {
  if (errnoCode(err) !== 'ELOOP') throw err;
  return realpathSync.native(path);
}

function openInputSync(path: FsPath): number {
  try {
    return openSync(path, READ_FLAGS);
  } catch (err) {
    return openSync(linkTarget(path, err), READ_FLAGS);
  }
}

/** A file of the batch opened for a read of many steps (a large hash, a PUT): see READ_FLAGS. */
export async function openInput(path: FsPath): Promise<FileHandle> {
  try {
    return await open(path, READ_FLAGS);
  } catch (err) {
    return open(linkTarget(path, err), READ_FLAGS);
  }
}

/** A whole file, read through one descriptor, with the stat of that descriptor (its size, not the walk's). */
export function readWhole(path: FsPath): { bytes: Buffer; read: FileStamp } {
  const fd = openInputSync(path);
  try {
    const read = stampOf(fstatSync(fd));
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
export async function fileFacts(path: FsPath, size: number): Promise<ReadFacts> {
  if (size < CHUNK_BYTES) {
    // A small file in one synchronous read: a rerun over thousands of them is bound by
    // syscalls, and the thread pool's round trips cost more than the reads themselves.
    const { bytes, read } = readWhole(path);
    return {
      sha256: sha256Of(bytes),
      mimeType: await detectMimeType(bytes.subarray(0, SNIFF_BYTES), printableBase(path)),
      read,
    };
  }
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(Math.max(SNIFF_BYTES, Math.min(size + 1, CHUNK_BYTES)));
  const handle = await openInput(path);
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
    mimeType: await detectMimeType(head ?? new Uint8Array(0), printableBase(path)),
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
export async function fileType(path: FsPath): Promise<string> {
  const head = Buffer.allocUnsafe(SNIFF_BYTES);
  const fd = openInputSync(path);
  let n: number;
  try {
    n = readSync(fd, head, 0, SNIFF_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  return detectMimeType(head.subarray(0, n), printableBase(path));
}
