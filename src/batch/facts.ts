import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { detectMimeType } from '../mime.ts';

/** What the pipeline learns about a file before sending it: its identity and its type. */
export type FileFacts = { sha256: string; mimeType: string };

/** sha256 of the content, streamed: the journal's key, so a renamed or moved file is still recognised. */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
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
