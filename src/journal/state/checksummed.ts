import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
  const body = Buffer.from(text, 'utf8');
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, Buffer.concat([Buffer.from(`${checksumOf(body)}\n`, 'latin1'), body]), { mode: 0o600 });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

function checksumOf(body: Uint8Array): string {
  return `crc32:${crc32(body).toString(16)}:${body.length}`;
}
