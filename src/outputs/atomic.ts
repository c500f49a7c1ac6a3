import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Characters gathered before one write. */
const WRITE_BATCH = 256 * 1024;

/**
 * Writes `chunks` to `path` so that readers see either the old file or the whole new one:
 * the bytes go to a temp file in the same directory (a rename is only atomic within one
 * file system), are flushed to disk, and the temp file is renamed over the target. On any
 * failure the temp file is removed and the target is left as it was.
 */
export async function writeFileAtomic(path: string, chunks: Iterable<string> | AsyncIterable<string>): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o644);
  try {
    try {
      // Chunks (a record each) are gathered into writes of about 256 KB: 20,000 records are
      // about 60 writes, not 20,000 awaited round trips through the thread pool.
      // A synchronous source is read without a microtask per record.
      let batch: string[] = [];
      let length = 0;
      const add = (chunk: string): boolean => {
        batch.push(chunk);
        length += chunk.length;
        return length >= WRITE_BATCH;
      };
      const flush = async (): Promise<void> => {
        await handle.write(batch.join(''));
        batch = [];
        length = 0;
      };
      if (Symbol.iterator in chunks) {
        for (const chunk of chunks) if (add(chunk)) await flush();
      } else {
        for await (const chunk of chunks) if (add(chunk)) await flush();
      }
      if (batch.length > 0) await flush();
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
