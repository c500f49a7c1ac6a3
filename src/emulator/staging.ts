import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Files that arrive with their bytes (the application's upload, the inbound webhook, email) are
 * staged in the data directory's partial/ folder as they stream in, hashed on the way, with
 * their first bytes kept for MIME detection: the server never holds a whole upload in memory.
 */
export type StagedFile = { path: string; size: number; sha256: string; head: Uint8Array };

/** Bytes kept for MIME detection (file-type reads at most this many). */
const HEAD_BYTES = 4100;

/** What {@link stageStream} throws for a body over its `maxBytes`, once the rest has been read and discarded. */
export class StagedTooLarge extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`over ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

/**
 * Streams `body` to a file in partialDir. With `maxBytes`, bytes are counted as they arrive:
 * past the limit nothing more is written, the rest of the body is read and discarded (so the
 * sender gets its answer), the file is removed and {@link StagedTooLarge} thrown.
 */
export async function stageStream(
  partialDir: string,
  body: Readable,
  options: { maxBytes?: number } = {},
): Promise<StagedFile> {
  const path = join(partialDir, `staged-${randomBytes(9).toString('hex')}`);
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  let headBytes = 0;
  let size = 0;
  try {
    await pipeline(
      body,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          size += chunk.length;
          if (size > maxBytes) continue;
          hash.update(chunk);
          if (headBytes < HEAD_BYTES) {
            head.push(chunk.subarray(0, HEAD_BYTES - headBytes));
            headBytes += Math.min(chunk.length, HEAD_BYTES - headBytes);
          }
          yield chunk;
        }
      },
      createWriteStream(path, { flush: true }),
    );
  } catch (err) {
    await rm(path, { force: true });
    throw err;
  }
  if (size > maxBytes) {
    await rm(path, { force: true });
    throw new StagedTooLarge(maxBytes);
  }
  return { path, size, sha256: hash.digest('hex'), head: Buffer.concat(head) };
}

export async function stageBytes(partialDir: string, bytes: Uint8Array): Promise<StagedFile> {
  const path = join(partialDir, `staged-${randomBytes(9).toString('hex')}`);
  await writeFile(path, bytes, { flush: true });
  return {
    path,
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    head: bytes.subarray(0, HEAD_BYTES),
  };
}

export const unstage = (file: StagedFile) => rm(file.path, { force: true });
