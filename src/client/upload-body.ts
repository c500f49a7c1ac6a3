import { createHash, type Hash } from 'node:crypto';
import { type FileHandle, open } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** A PUT reads the file in chunks of this size... */
export const UPLOAD_CHUNK_BYTES = 256 * 1024;
/**
 * ...into a ring of this many buffers, reused: one being sent, one being read ahead, one
 * spare. A fresh buffer per chunk (createReadStream) leaves 1 MiB chunks for the GC to free
 * late, and resident memory then climbs with the size of the upload.
 */
const RING = 3;

/** The file a PUT streams: read from disk on every attempt, so a retry never resends a spent stream. */
export type UploadSource = {
  /** Bytes for a name that is not UTF-8 (batch/paths.ts); or the descriptor the caller read the file through. */
  path: string | Buffer | FileHandle;
  /** The file's name in messages. */
  name: string;
  size: number;
  type: string;
};

/** A file changed (shrank) while it was being sent: the file's failure, not the service's (service-client.ts). */
export class FileChangedError extends Error {
  readonly code = 'EXTRACT_FILE_CHANGED';
}

/**
 * The bytes of one PUT attempt: the file's first `size` bytes (a path, or a descriptor the caller holds), read once into reused buffers
 * and hashed on the way (the same buffers), so a large file is read once, not once to hash
 * and again to send. `digest()` is the sha256 of what was sent, once every byte has been read.
 *
 * Reusing a buffer is safe: undici pauses the stream whenever the socket's write() returns
 * false, which it does for any chunk over the socket's 16 KB high-water mark, and resumes it
 * on 'drain', once the socket has handed that chunk to the kernel. So at most one chunk is in
 * the socket, one waits in the stream (its high-water mark is one byte: it holds no more) and
 * one is being read ahead: three buffers.
 */
export function hashedFileBody(
  file: string | Buffer | FileHandle,
  size: number,
  name: string,
): { body: Readable; digest: () => string | undefined } {
  const hash: Hash = createHash('sha256');
  let sent = 0;
  let digest: string | undefined;
  async function* chunks(): AsyncGenerator<Buffer> {
    // A descriptor the caller opened is the caller's (each attempt reads it again by position).
    const own = typeof file === 'string' || Buffer.isBuffer(file);
    const handle = own ? await open(file, 'r') : file;
    let ahead: Promise<Buffer> | undefined;
    try {
      const ring = Array.from({ length: RING }, () => Buffer.allocUnsafe(UPLOAD_CHUNK_BYTES));
      const readInto = async (slot: number, position: number): Promise<Buffer> => {
        const buffer = ring[slot % RING]!;
        const { bytesRead } = await handle.read(buffer, 0, Math.min(UPLOAD_CHUNK_BYTES, size - position), position);
        return buffer.subarray(0, bytesRead);
      };
      let slot = 0;
      ahead = size > 0 ? readInto(slot, 0) : undefined;
      while (ahead !== undefined) {
        const chunk = await ahead;
        if (chunk.length === 0)
          throw new FileChangedError(
            `${name} shrank while it was being sent (still being written?): nothing was charged, and a rerun sends it as it is then`,
          );
        sent += chunk.length;
        slot++;
        // Read the next chunk while this one is hashed and sent.
        ahead = sent < size ? readInto(slot, sent) : undefined;
        hash.update(chunk);
        // Known before the last chunk is yielded: the answer may come before the stream is asked for its end.
        if (sent === size) digest = hash.digest('hex');
        yield chunk;
      }
    } finally {
      // An attempt cut short (abort, reset) leaves a read ahead in flight: let it end before closing.
      await ahead?.catch(() => {});
      if (own) await handle.close();
    }
  }
  return {
    body: Readable.from(chunks(), { objectMode: false, highWaterMark: 1 }),
    // Undefined when the answer came before every byte was read (a server may answer early).
    digest: () => digest,
  };
}
