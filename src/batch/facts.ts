import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { detectMimeType } from '../mime/detect.ts';
import { printableBase, type FsPath } from './paths.ts';

/** What the pipeline learns about a file before sending it: its identity and its type. */
export type FileFacts = { sha256: string; mimeType: string };

/** The largest read: big files stream through one buffer of this size, reused. */
const CHUNK_BYTES = 1024 * 1024;
/** file-type needs at most a few KB of the head to recognise any format it knows. */
const SNIFF_BYTES = 4100;

/**
 * The sha256 of the content (the journal's key, so a renamed or moved file is still
 * recognised) and the MIME type from the content's head, then the extension; never from the
 * extension alone. One open and one pass per file, with a buffer no larger than the file:
 * a rerun over 20,000 small files must cost about what hashing them does.
 */
export async function fileFacts(path: FsPath, size: number): Promise<FileFacts> {
  if (size < CHUNK_BYTES) {
    // A small file in one synchronous read: a rerun over thousands of them is bound by
    // syscalls, and the thread pool's round trips cost more than the reads themselves.
    const bytes = readFileSync(path);
    return {
      sha256: createHash('sha256').update(bytes).digest('hex'),
      mimeType: await detectMimeType(bytes.subarray(0, SNIFF_BYTES), printableBase(path)),
    };
  }
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(Math.max(SNIFF_BYTES, Math.min(size + 1, CHUNK_BYTES)));
  const handle = await open(path, 'r');
  let head: Uint8Array | undefined;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (head === undefined) head = Buffer.from(buffer.subarray(0, Math.min(bytesRead, SNIFF_BYTES)));
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), mimeType: await detectMimeType(head ?? new Uint8Array(0), printableBase(path)) };
}

/**
 * The MIME type alone, from the head of the content (a large file sent by upload is hashed
 * while it is sent, not before: see the pipeline's one read pass).
 */
export async function fileType(path: FsPath): Promise<string> {
  const head = Buffer.allocUnsafe(SNIFF_BYTES);
  const fd = openSync(path, 'r');
  let n: number;
  try {
    n = readSync(fd, head, 0, SNIFF_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  return detectMimeType(head.subarray(0, n), printableBase(path));
}
