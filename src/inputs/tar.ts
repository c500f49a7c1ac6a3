/**
 * A tar archive's members (POSIX ustar, with pax and GNU long names), read header by header from
 * the file. A .tar.gz is first gunzipped into the part space by the expander, within the bounds.
 *
 * Why not the `tar` package: it is not among this project's dependencies (and the client adds
 * none without a reason); reading a tar is its 512-byte headers, a checksum and three ways of
 * writing a long name (POSIX.1-2001 pax, GNU `L`), which this module reads and no more: files are
 * taken, folders passed over, every other kind (links, devices, FIFOs) refused by name.
 */
import type { FileHandle } from 'node:fs/promises';
import { type ContainerReader, type Member, Refused } from './container.ts';
import { rangeOf, readAt } from './read.ts';

const BLOCK = 512;

export const readTar: ContainerReader = async function* (handle, fileSize, bounds): AsyncGenerator<Member> {
  let at = 0;
  let count = 0;
  /** A name given ahead of its member (pax `path=`, GNU `L`), and a pax size. */
  let nextName: string | undefined;
  let nextSize: number | undefined;
  while (at + BLOCK <= fileSize) {
    const header = await readAt(handle, at, BLOCK);
    if (header.every((b) => b === 0)) return;
    checkSum(header, at);
    if (++count > bounds.members) throw new Refused(`holds more than ${bounds.members} members`);
    const type = String.fromCharCode(header[156] ?? 0);
    const size = nextSize ?? octal(header.subarray(124, 136), at);
    const data = at + BLOCK;
    if (data + size > fileSize) throw new Refused('a damaged tar archive (a member lies past its end)');
    at = data + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x' || type === 'L') {
      if (size > 1024 * 1024) throw new Refused('a damaged tar archive (an extended header over 1 MiB)');
      const bytes = await readAt(handle, data, size);
      if (type === 'L') nextName = bytes.toString('utf8').replace(/\0+$/, '');
      else ({ name: nextName = nextName, size: nextSize } = paxRecords(bytes.toString('latin1')));
      continue;
    }
    // `tar -C dir .` writes every name from `./`: the folder itself, not part of a member's name.
    const name = (nextName ?? headerName(header)).replace(/^(\.\/)+/, '');
    nextName = undefined;
    nextSize = undefined;
    if (type === 'g' || type === '5' || name === '' || name.endsWith('/')) continue;
    if (type === '0' || type === '\0' || type === '7')
      yield { kind: 'file', name, declared: size, open: () => stream(handle, data, size) };
    else yield { kind: 'refused', name, reason: `${tarKind(type)} in the archive: not followed, not expanded` };
  }
};

function stream(handle: FileHandle, start: number, size: number) {
  return size === 0 ? new Uint8Array(0) : rangeOf(handle, start, size);
}

function tarKind(type: string): string {
  if (type === '2') return 'a symbolic link';
  if (type === '1') return 'a hard link';
  if (type === '3' || type === '4') return 'a device';
  if (type === '6') return 'a FIFO';
  return `a member of type ${JSON.stringify(type)}`;
}

/** The ustar name: its prefix (345, 155 bytes) and its name (0, 100 bytes). */
function headerName(header: Buffer): string {
  const field = (from: number, length: number) => {
    const raw = header.subarray(from, from + length);
    const end = raw.indexOf(0);
    return raw.subarray(0, end < 0 ? length : end).toString('utf8');
  };
  const name = field(0, 100);
  const ustar = header.subarray(257, 262).toString('latin1') === 'ustar';
  const prefix = ustar ? field(345, 155) : '';
  return prefix === '' ? name : `${prefix}/${name}`;
}

/** A number field: octal text, or base-256 (a leading 0x80 byte) as GNU writes large sizes. */
function octal(field: Buffer, at: number): number {
  if (((field[0] ?? 0) & 0x80) !== 0) {
    let n = 0;
    for (let i = 1; i < field.length; i++) n = n * 256 + (field[i] ?? 0);
    return n;
  }
  const text = field
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .trim();
  const n = text === '' ? 0 : Number.parseInt(text, 8);
  if (!Number.isSafeInteger(n) || n < 0) throw new Refused(`a damaged tar archive (a bad number at byte ${at})`);
  return n;
}

/** The header's checksum: the sum of its bytes with the checksum field read as spaces. */
function checkSum(header: Buffer, at: number): void {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
  if (sum !== octal(header.subarray(148, 156), at))
    throw new Refused(`not a tar archive, or a damaged one (a header at byte ${at} fails its checksum)`);
}

/**
 * pax records `LEN key=value\n`: the path and size, the keys that change where the member is.
 * LEN counts bytes: the text is read as Latin-1 (a character a byte), a value decoded as UTF-8.
 */
function paxRecords(text: string): { name?: string; size?: number } {
  const out: { name?: string; size?: number } = {};
  for (let at = 0; at < text.length; ) {
    const space = text.indexOf(' ', at);
    const length = Number.parseInt(text.slice(at, space), 10);
    if (space < 0 || !Number.isSafeInteger(length) || length <= 0) break;
    const record = text.slice(space + 1, at + length - 1);
    const eq = record.indexOf('=');
    const key = record.slice(0, eq);
    if (key === 'path') out.name = Buffer.from(record.slice(eq + 1), 'latin1').toString('utf8');
    if (key === 'size') out.size = Number(record.slice(eq + 1));
    at += length;
  }
  return out;
}
