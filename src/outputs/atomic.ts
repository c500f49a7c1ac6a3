import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { errnoCode, hasErrno } from '../errno.ts';
import { followLinks } from './destination.ts';

/** Characters gathered before one write. */
const WRITE_BATCH = 256 * 1024;

/**
 * Writes `chunks` to `path` so that readers see either the old file or the whole new one:
 * the bytes go to a temp file in the same directory (a rename is only atomic within one
 * file system), are flushed to disk, and the temp file is renamed over the target. On any
 * failure the temp file is removed and the target is left as it was.
 *
 * A target that already holds exactly these bytes is left as it is, mtime included: a rerun
 * that changes nothing rewrites nothing (no write, no flush, no rename), and tools that
 * watch the file (make, rsync, a sync client) see no change. The new bytes are compared
 * with the target's as they come; at the first difference the temp file starts with the
 * target's equal prefix, copied from it, and the write goes on as above.
 *
 * A symlink is written through: its final target is replaced, the link stays a link (a dangling
 * one creates its target). The replaced file keeps its mode and, where the user may set them,
 * its owner and group; a new file gets 0666 less the umask, as every Unix tool's. Anything but
 * a regular file (a device, a FIFO: outputs/open-stream.ts writes those) is refused, never replaced.
 */
export async function writeFileAtomic(given: string, chunks: Iterable<string> | AsyncIterable<string>): Promise<void> {
  const path = followLinks(given).path;
  const existing = await _statOrNothing(path);
  if (existing !== undefined && !existing.isFile()) {
    const code = existing.isDirectory() ? 'EISDIR' : 'EEXIST';
    throw Object.assign(new Error(`${path} is not a regular file: it is not replaced`), { code });
  }
  const target = await openForCompare(path);
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let out: FileHandle | undefined;
  // Bytes of the new content so far; while `out` is undefined they equal the target's first bytes.
  let length = 0;
  const startTemp = async (): Promise<FileHandle> => {
    const handle = await open(temp, 'wx', 0o666);
    if (existing !== undefined) await _keepModeAndOwner(handle, existing);
    if (target !== undefined && length > 0) await copyPrefix(target, handle, length);
    return handle;
  };
  try {
    try {
      const put = async (text: string): Promise<void> => {
        const bytes = Buffer.from(text, 'utf8');
        if (out === undefined && target !== undefined && (await target.holds(bytes, length))) {
          length += bytes.length;
          return;
        }
        out ??= await startTemp();
        await writeAll(out, bytes);
        length += bytes.length;
      };
      // Chunks (a record each) are gathered into writes of about 256 KB: 20,000 records are
      // about 60 writes, not 20,000 awaited round trips through the thread pool.
      // A synchronous source is read without a microtask per record.
      let batch: string[] = [];
      let size = 0;
      const add = (chunk: string): boolean => {
        batch.push(chunk);
        size += chunk.length;
        return size >= WRITE_BATCH;
      };
      const flush = async (): Promise<void> => {
        const text = batch.join('');
        batch = [];
        size = 0;
        await put(text);
      };
      if (Symbol.iterator in chunks) {
        for (const chunk of chunks) if (add(chunk)) await flush();
      } else {
        for await (const chunk of chunks) if (add(chunk)) await flush();
      }
      if (batch.length > 0) await flush();
      // Every byte matched and the target has no more: nothing to write.
      if (out === undefined && target !== undefined && target.size === length) return;
      out ??= await startTemp();
      await out.sync();
    } finally {
      await out?.close();
      await target?.handle.close();
    }
    if (out !== undefined) await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

async function _statOrNothing(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
}

/**
 * The replaced file's owner and group (where the user may give them: otherwise the new file is
 * the user's), then its mode, not the umask's; in that order, since a chown clears set-id bits.
 */
async function _keepModeAndOwner(handle: FileHandle, was: Stats): Promise<void> {
  try {
    await handle.chown(was.uid, was.gid);
  } catch (err) {
    if (!hasErrno(err, 'EPERM')) throw err;
  }
  await handle.chmod(was.mode & 0o7777);
}

type Existing = {
  handle: FileHandle;
  size: number;
  /** Whether the file's bytes at `offset` are `bytes`. */
  holds(bytes: Buffer, offset: number): Promise<boolean>;
};

/** The target as it is, to compare with; undefined when there is none (or it cannot be read: then it is replaced). */
async function openForCompare(path: string): Promise<Existing | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return undefined;
    }
    let buffer = Buffer.alloc(0);
    return {
      handle,
      size: info.size,
      async holds(bytes, offset) {
        if (offset + bytes.length > info.size) return false;
        if (buffer.length < bytes.length) buffer = Buffer.allocUnsafe(bytes.length);
        const { bytesRead } = await handle.read(buffer, 0, bytes.length, offset);
        return bytesRead === bytes.length && buffer.subarray(0, bytesRead).equals(bytes);
      },
    };
  } catch {
    await handle.close();
    return undefined;
  }
}

/** The first `length` bytes of the target (equal to the new content's) into the temp file. */
async function copyPrefix(from: Existing, to: FileHandle, length: number): Promise<void> {
  const buffer = Buffer.allocUnsafe(Math.min(length, 1024 * 1024));
  for (let at = 0; at < length; ) {
    const { bytesRead } = await from.handle.read(buffer, 0, Math.min(buffer.length, length - at), at);
    if (bytesRead === 0)
      throw Object.assign(new Error(`${from.size} bytes expected, the file ended at ${at}`), { code: 'EIO' });
    await writeAll(to, buffer.subarray(0, bytesRead));
    at += bytesRead;
  }
}

/** A write can take fewer bytes than given (a full disk says so on the next): go on until all are in. */
async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.length - at);
    if (bytesWritten === 0) throw Object.assign(new Error('the file accepted no bytes'), { code: 'EIO' });
    at += bytesWritten;
  }
}

/** A file's text, or '' when there is no file yet (an output about to be appended to). */
export async function readTextOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return '';
    throw err;
  }
}
