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

export async function stageStream(partialDir: string, body: Readable): Promise<StagedFile> {
  const path = join(partialDir, `staged-${randomBytes(9).toString('hex')}`);
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  let size = 0;
  try {
    await pipeline(
      body,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          size += chunk.length;
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
