import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { detectMimeType } from '../mime.ts';

/** What the pipeline learns about a file before sending it: its identity and its type. */
export type FileFacts = { sha256: string; mimeType: string };

/** sha256 of the content, streamed: the journal's key, so a renamed or moved file is still recognised. */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  // One buffer, reused: a read stream allocates a new chunk per read, and a 1 GB file then
  // sits in memory until the garbage collector catches up.
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const handle = await open(path, 'r');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/** file-type needs at most a few KB of the head to recognise any format it knows. */
const SNIFF_BYTES = 4100;

/** The MIME type from the content (magic bytes), then the extension: never from the extension alone. */
export async function sniffMimeType(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const head = new Uint8Array(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return await detectMimeType(head.subarray(0, bytesRead), basename(path));
  } finally {
    await handle.close();
  }
}

export async function fileFacts(path: string): Promise<FileFacts> {
  const [sha256, mimeType] = await Promise.all([hashFile(path), sniffMimeType(path)]);
  return { sha256, mimeType };
}
