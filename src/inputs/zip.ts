/**
 * A zip archive's members, read from its central directory and inflated by node:zlib, a member
 * at a time from the file (never the whole archive in memory).
 *
 * Why not fflate's readers: `unzipSync` holds the archive and every member in memory, and its
 * streaming `Unzip` reads the local headers only; the bounds need the central directory first
 * (how many members, the sizes they claim) and it alone says which member is a symbolic link
 * (its external attributes), which must be refused. The directory is a fixed, documented layout
 * (APPNOTE.TXT 4.3.12, 4.3.16), read here in a few lines.
 */
import type { FileHandle } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { pipeline } from 'node:stream';
import { createInflateRaw, inflateRawSync } from 'node:zlib';
import { TooLarge } from './part.ts';
import { type Bounds, type ContainerReader, type Member, Refused, sizeText } from './container.ts';
import { readAt } from '../read-at.ts';
import { rangeOf } from './read.ts';

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** The end record and the longest comment after it. */
const TAIL = 22 + 0xffff;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const UNIX = 3;
/** Members up to this size compressed are inflated in one call. */
const SMALL = 1024 * 1024;

type Entry = {
  name: string;
  method: number;
  flags: number;
  compressed: number;
  size: number;
  local: number;
  link: boolean;
};

export const readZip: ContainerReader = async function* (handle, fileSize, bounds): AsyncGenerator<Member> {
  const entries = await centralDirectory(handle, fileSize, bounds);
  for (const e of entries) {
    if (e.name.endsWith('/')) continue;
    if (e.link) {
      yield { kind: 'refused', name: e.name, reason: 'a symbolic link in the archive: not followed, not expanded' };
      continue;
    }
    if ((e.flags & 1) !== 0) {
      yield { kind: 'refused', name: e.name, reason: 'an encrypted member: not expanded' };
      continue;
    }
    if (e.method !== 0 && e.method !== 8) {
      yield {
        kind: 'refused',
        name: e.name,
        reason: `compressed by method ${e.method}, which extract does not read (stored and deflated are): not expanded`,
      };
      continue;
    }
    yield { kind: 'file', name: e.name, declared: e.size, open: () => memberBytes(handle, fileSize, e) };
  }
};

/** The entries of the central directory, checked against the bounds before any member is inflated. */
async function centralDirectory(handle: FileHandle, fileSize: number, bounds: Bounds): Promise<Entry[]> {
  const tailSize = Math.min(fileSize, TAIL);
  const tail = await readAt(handle, fileSize - tailSize, tailSize);
  let end = -1;
  for (let i = tail.length - 22; i >= 0; i--)
    if (tail.readUInt32LE(i) === EOCD) {
      end = i;
      break;
    }
  if (end < 0) throw new Refused('not a zip archive (no central directory): damaged or cut short');
  const count = tail.readUInt16LE(end + 10);
  const dirSize = tail.readUInt32LE(end + 12);
  const dirAt = tail.readUInt32LE(end + 16);
  if (count === 0xffff || dirAt === 0xffffffff || dirSize === 0xffffffff)
    throw new Refused('a zip64 archive (over 65,535 members or 4 GiB): larger than extract expands');
  if (count > bounds.members) throw new Refused(`holds ${count} members, more than ${bounds.members}`);
  if (dirAt + dirSize > fileSize) throw new Refused('a damaged zip archive (its directory lies past its end)');
  const dir = await readAt(handle, dirAt, dirSize);
  const entries: Entry[] = [];
  let declared = 0;
  for (let at = 0, n = 0; n < count; n++) {
    if (at + 46 > dir.length || dir.readUInt32LE(at) !== CENTRAL)
      throw new Refused('a damaged zip archive (its directory is cut short)');
    const madeBy = dir.readUInt16LE(at + 4);
    const nameLength = dir.readUInt16LE(at + 28);
    const raw = dir.subarray(at + 46, at + 46 + nameLength);
    const flags = dir.readUInt16LE(at + 8);
    const entry: Entry = {
      // Bit 11 says UTF-8; most tools write UTF-8 without it, older ones their code page (read as Latin-1).
      name: raw.toString((flags & 0x800) !== 0 || isUtf8(raw) ? 'utf8' : 'latin1'),
      method: dir.readUInt16LE(at + 10),
      flags,
      compressed: dir.readUInt32LE(at + 20),
      size: dir.readUInt32LE(at + 24),
      local: dir.readUInt32LE(at + 42),
      link: madeBy >> 8 === UNIX && ((dir.readUInt32LE(at + 38) >>> 16) & S_IFMT) === S_IFLNK,
    };
    declared += entry.size;
    entries.push(entry);
    at += 46 + nameLength + dir.readUInt16LE(at + 30) + dir.readUInt16LE(at + 32);
  }
  const most = Math.min(bounds.bytes, Math.max(bounds.ratioFloor, fileSize * bounds.ratio));
  if (declared > most)
    throw new Refused(
      `expands to ${sizeText(declared)} from ${sizeText(fileSize)}, more than ${sizeText(most)} (a zip bomb?)`,
    );
  return entries;
}

/** A member's bytes: its local header read for where its data starts, then the data, inflated if deflated. */
async function memberBytes(handle: FileHandle, fileSize: number, e: Entry) {
  const header = await readAt(handle, e.local, 30);
  if (header.length < 30 || header.readUInt32LE(0) !== LOCAL)
    throw new Refused(`a damaged zip archive (no local header for ${e.name})`);
  const start = e.local + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (start + e.compressed > fileSize) throw new Refused(`a damaged zip archive (${e.name} lies past its end)`);
  if (e.compressed === 0) return new Uint8Array(0);
  // A small member in one read and one call: a zlib stream per member of a thousand-member zip
  // held native memory until the collector ran (bench row 15 mem). Never more than it claims.
  if (e.method === 8 && e.compressed <= SMALL && e.size <= SMALL * 8) {
    try {
      return inflateRawSync(await readAt(handle, start, e.compressed), { maxOutputLength: Math.max(1, e.size) });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new TooLarge(e.size + 1);
      throw err;
    }
  }
  const data = rangeOf(handle, start, e.compressed);
  // pipeline: a read error or a damaged deflate stream ends the member's bytes with the error.
  return e.method === 0 ? data : pipeline(data, createInflateRaw(), () => {});
}
