/**
 * Paths whose names are not UTF-8, reached: the file system as the glob engine sees it, a
 * match read as UTF-8 looked up by its bytes, and real paths kept as bytes (paths.ts).
 */
import { type Dirent, lstat, readdir, readdirSync, realpathSync, stat } from 'node:fs';
import type { Options as FastGlobOptions } from 'fast-glob';
import { resolve } from 'node:path';
import { childPath, fromBytes, type FsPath } from '../paths.ts';

export const BYTES = { encoding: 'buffer' } as const;

/**
 * The file system as the glob engine sees it, with names that are not UTF-8 reached: the engine
 * joins names it read as UTF-8 (U+FFFD for each byte that is not), so a folder so named would
 * open nothing and the files under it would be missed. A path holding U+FFFD is looked up by
 * its bytes (namesBehind) before each call; every other path goes straight to node:fs.
 */
export function bytesFs(cwd: string): NonNullable<FastGlobOptions['fs']> {
  const real = (path: string): FsPath => (path.includes('\uFFFD') ? (namesBehind(path, cwd)[0] ?? path) : path);
  type Done<T> = (error: NodeJS.ErrnoException | null, value: T) => void;
  function readdirOf(path: string, options: { withFileTypes: true }, callback: Done<Dirent[]>): void;
  function readdirOf(path: string, callback: Done<string[]>): void;
  function readdirOf(path: string, ...rest: [{ withFileTypes: true }, Done<Dirent[]>] | [Done<string[]>]): void {
    if (rest.length === 1) readdir(real(path), 'utf8', rest[0]);
    else readdir(real(path), { withFileTypes: true, encoding: 'utf8' }, rest[1]);
  }
  return {
    lstat: (path, callback) => lstat(real(path), callback),
    stat: (path, callback) => stat(real(path), callback),
    readdir: readdirOf,
  };
}

/**
 * The paths a match read as UTF-8 stands for: each part holding U+FFFD is looked up in its
 * folder's names as bytes (two names may read the same, so a match may stand for several).
 */
export function namesBehind(match: string, cwd: string): FsPath[] {
  let paths: FsPath[] = [match.startsWith('/') ? '/' : ''];
  for (const part of match.split('/').filter((p) => p !== '')) {
    if (!part.includes('\uFFFD')) {
      paths = paths.map((p) => (p === '' ? part : childPath(p, part)));
      continue;
    }
    paths = paths.flatMap((p) => {
      const folder = p === '' ? resolve(cwd) : typeof p === 'string' ? resolve(cwd, p) : resolveBytes(cwd, p);
      try {
        return readdirSync(folder, BYTES)
          .filter((b) => b.toString('utf8') === part)
          .map((b) => (p === '' ? fromBytes(b) : childPath(p, fromBytes(b))));
      } catch {
        return [];
      }
    });
  }
  return paths;
}

/**
 * The real path, as bytes when the path is: Node's own realpathSync turns a Buffer into a
 * string on its way (U+FFFD for the bytes that are not UTF-8), realpath(3) does not.
 */
export function realPathOf(path: FsPath): FsPath {
  return typeof path === 'string' ? realpathSync(path) : fromBytes(realpathSync.native(path, BYTES));
}

/** A path read as bytes (from stdin), against the working directory. */
export function resolveBytes(cwd: string, path: Buffer): FsPath {
  return path[0] === 0x2f ? fromBytes(path) : childPath(resolve(cwd), fromBytes(path));
}

/** The real path of a pattern's folder, or undefined when it has none (then no match can be in it anyway). */
export function realFolder(folder: string, name: string): { root: FsPath; name: string } | undefined {
  try {
    return { root: realpathSync(folder), name: name.endsWith('/') ? name : `${name}/` };
  } catch {
    return undefined;
  }
}
