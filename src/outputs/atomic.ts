import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

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
      for await (const chunk of chunks) await handle.write(chunk);
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
