import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * The derived files beside a journal (its index, the stat cache) are caches: each is written
 * whole under a checksum of its body and read only when the checksum holds, so a torn,
 * truncated or hand-edited file is ignored (and rebuilt) rather than trusted.
 */

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The JSON body of a checksummed file, or undefined when it is missing, damaged or unreadable. */
export function readChecksummed(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const newline = text.indexOf('\n');
  if (newline < 0) return undefined;
  const body = text.slice(newline + 1);
  if (sha256Hex(body) !== text.slice(0, newline)) return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** Replaces the file in one rename; not fsync'd: a cache lost to a power cut is rebuilt. */
export function writeChecksummed(path: string, value: unknown): void {
  const body = JSON.stringify(value);
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, `${sha256Hex(body)}\n${body}`, { mode: 0o600 });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
