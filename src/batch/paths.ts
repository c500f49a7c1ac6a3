import { Buffer, isUtf8 } from 'node:buffer';
import { basename } from 'node:path';

/**
 * A file's name is bytes. Node decodes names as UTF-8, so a name that is not (Latin-1, as
 * Windows shares and old scanners write them: `Rechnung_M\xfcller.pdf`) comes back with U+FFFD
 * in place of its bytes and opens nothing. Such a file keeps its bytes as its path (a Buffer,
 * which every fs call takes); every other file keeps the plain string it always had.
 */
export type FsPath = string | Buffer;

/** The bytes as a path: the string when they are UTF-8 (nearly always), else the bytes themselves. */
export function fromBytes(bytes: Buffer): FsPath {
  return isUtf8(bytes) ? bytes.toString('utf8') : bytes;
}

/**
 * The name records, messages and the service see: each part of the path read as UTF-8, or as
 * Latin-1 when it is not UTF-8 (`Rechnung_Müller.pdf`). Latin-1 gives every byte one character,
 * so the name is printable and says which bytes it was made of.
 */
export function printable(path: FsPath): string {
  if (typeof path === 'string') return path;
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i < path.length && path[i] !== SLASH) continue;
    const part = path.subarray(start, i);
    parts.push(part.toString(isUtf8(part) ? 'utf8' : 'latin1'));
    start = i + 1;
  }
  return parts.join('/');
}

/** The file's own name, printable (the service's file_name, the extension MIME detection falls back on). */
export function printableBase(path: FsPath): string {
  return basename(printable(path));
}

/**
 * A string that stands for one path and no other, for maps, sets and the stat cache: the path
 * itself when it is a string; for bytes, a form no real path (which starts with "/") can take.
 */
export function pathKey(path: FsPath): string {
  return typeof path === 'string' ? path : `latin1:${path.toString('latin1')}`;
}

/** `dir/name`, as a string when both are, as bytes when either is. */
export function childPath(dir: FsPath, name: FsPath): FsPath {
  if (typeof dir === 'string' && typeof name === 'string')
    // One flat string (join, not a rope): the real path is a key of several maps and sets.
    return dir.endsWith('/') ? [dir, name].join('') : [dir, name].join('/');
  const head = typeof dir === 'string' ? Buffer.from(dir) : dir;
  const tail = typeof name === 'string' ? Buffer.from(name) : name;
  return Buffer.concat(head[head.length - 1] === SLASH ? [head, tail] : [head, SEPARATOR, tail]);
}

/** Whether `path` is `root` or below it (both real paths). */
export function isInside(path: FsPath, root: FsPath): boolean {
  if (typeof path === 'string' && typeof root === 'string')
    return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
  const p = typeof path === 'string' ? Buffer.from(path) : path;
  const r = typeof root === 'string' ? Buffer.from(root) : root;
  if (p.equals(r)) return true;
  const prefix = r[r.length - 1] === SLASH ? r : Buffer.concat([r, SEPARATOR]);
  return p.length > prefix.length && p.subarray(0, prefix.length).equals(prefix);
}

const SLASH = 0x2f;
const SEPARATOR = Buffer.from('/');
