import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * The derived files beside a journal (its index, the stat cache) are caches: each is written
 * whole under a checksum of its body and read only when the checksum holds, so a torn,
 * truncated or hand-edited file is ignored (and rebuilt) rather than trusted. The checksum is
 * a CRC-32 of the body's bytes and their length: it guards against accidents, not attackers
 * (whoever can write the cache can write the journal), at a twentieth of sha256's cost on the
 * megabytes a rerun of 20,000 documents reads.
 */

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The body of a checksummed file as text, or undefined when it is missing or damaged. */
export function readChecksummed(path: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) return undefined;
  const body = bytes.subarray(newline + 1);
  return bytes.toString('latin1', 0, newline) === checksumOf(body) ? body.toString('utf8') : undefined;
}

/** Replaces the file in one rename; not fsync'd: a cache lost to a power cut is rebuilt. */
export function writeChecksummed(path: string, text: string): void {
  writeChecksummedChunks(path, () => [text]);
}

/**
 * writeChecksummed over a body given in pieces, read twice (its checksum and length, then its
 * bytes): the same file, holding about CHUNK_BYTES of it at a time rather than the whole body
 * three times over (its text, its bytes, the bytes with the header), which at 100,000 files
 * was a first run's peak.
 */
export function writeChecksummedChunks(path: string, body: () => Iterable<string>): void {
  let crc = 0;
  let length = 0;
  for (const bytes of inBlocks(body())) {
    crc = crc32(bytes, crc);
    length += bytes.length;
  }
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeAll(fd, Buffer.from(`crc32:${crc.toString(16)}:${length}\n`, 'latin1'));
      let written = 0;
      for (const bytes of inBlocks(body())) {
        writeAll(fd, bytes);
        written += bytes.length;
      }
      // The body must be the same at each reading: a caller whose pieces changed in between wrote a bad cache.
      if (written !== length) throw new Error(`${path}: the body changed while it was written`);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

const CHUNK_BYTES = 256 * 1024;

/** The pieces' UTF-8 bytes in blocks of about CHUNK_BYTES (a piece is never split: its encoding is its own). */
function* inBlocks(pieces: Iterable<string>): Generator<Buffer> {
  let pending: string[] = [];
  let size = 0;
  for (const piece of pieces) {
    pending.push(piece);
    size += piece.length;
    if (size >= CHUNK_BYTES) {
      yield Buffer.from(pending.join(''), 'utf8');
      pending = [];
      size = 0;
    }
  }
  if (size > 0 || pending.length > 0) yield Buffer.from(pending.join(''), 'utf8');
}

function writeAll(fd: number, bytes: Buffer): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
}

function checksumOf(body: Uint8Array): string {
  return `crc32:${crc32(body).toString(16)}:${body.length}`;
}
