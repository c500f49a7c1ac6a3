/** Reads of a container file by position, through one handle its members share. */
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { readAt } from '../read-at.ts';
import { Refused } from './container.ts';

/**
 * `length` bytes of the file from `start`, as a stream. Not FileHandle.createReadStream: a
 * stream of it destroyed closes the handle whatever autoClose says, and the next member is read
 * through the same handle.
 */
export function rangeOf(handle: FileHandle, start: number, length: number): Readable {
  const CHUNK = 256 * 1024;
  return Readable.from(
    (async function* () {
      for (let at = start, end = start + length; at < end; ) {
        const chunk = await readAt(handle, at, Math.min(CHUNK, end - at));
        if (chunk.length === 0) throw new Refused('the archive was cut short while it was read');
        at += chunk.length;
        yield chunk;
      }
    })(),
    { objectMode: false },
  );
}
