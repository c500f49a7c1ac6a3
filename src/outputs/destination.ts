import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * What a path given to -o or --report names, as every Unix tool reads it: `-` and the process's
 * own fd 1 are stdout; another open descriptor (/dev/fd/N, /proc/self/fd/N, /dev/stderr: bash's
 * `>(cmd)` is one) and anything that is not a regular file (a device, a FIFO, a socket) are
 * written as a stream, never replaced; a regular file (or none yet) is replaced atomically,
 * through any symlinks to it (outputs/atomic.ts).
 */
export type Destination =
  | { kind: 'stdout' }
  | StreamDestination
  | {
      kind: 'file';
      /** The path as given (resolved against the working directory); links are followed when it is written. */
      path: string;
    };

export type StreamDestination =
  | {
      kind: 'fd';
      /** A descriptor this process holds open (not 1: that is stdout). */
      fd: number;
      path: string;
    }
  | { kind: 'stream'; type: 'fifo' | 'socket' | 'device'; path: string };

/** Linux stops at 40 links in a row (ELOOP); so does the walk below. */
const MAX_LINKS = 40;

/** `-o` or `--report` as typed, read against `cwd`. Looks at the file system, writes nothing. */
export function destinationOf(given: string, cwd: string): Destination {
  if (given === '-') return { kind: 'stdout' };
  const path = resolve(cwd, given);
  const end = followLinks(path);
  if (end.fd === 1) return { kind: 'stdout' };
  if (end.fd !== undefined) return { kind: 'fd', fd: end.fd, path };
  const info = _quietly(() => statSync(end.path, { throwIfNoEntry: false }));
  if (info === undefined || info.isFile() || info.isDirectory()) return { kind: 'file', path };
  if (info.isFIFO()) return { kind: 'stream', type: 'fifo', path };
  if (info.isSocket()) return { kind: 'stream', type: 'socket', path };
  return { kind: 'stream', type: 'device', path };
}

/**
 * Where `path` ends after its symlinks, stopping at a name of an open descriptor: reading
 * /proc/self/fd/1 gives `pipe:[…]` or the path of a file another process opened, neither of
 * which may be replaced. A dangling link ends at the path it names (writing creates it); a
 * loop ends where it was given up, and opening it says ELOOP.
 */
export function followLinks(path: string): { path: string; fd?: number } {
  let at = path;
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    const fd = descriptorNamed(at);
    if (fd !== undefined) return { path: at, fd };
    const info = _quietly(() => lstatSync(at, { throwIfNoEntry: false }));
    if (info === undefined || !info.isSymbolicLink()) return { path: at };
    // A relative target is read from the link's real directory, as the kernel reads it (`..` included).
    at = resolve(realpathSync(dirname(at)), readlinkSync(at));
  }
  return { path: at };
}

/**
 * A path that cannot be looked at (ENOTDIR, EACCES) is taken as a file to write: writing it
 * fails with the same code, said then (or by prepareOutput, before anything is sent).
 */
function _quietly<T>(look: () => T): T | undefined {
  try {
    return look();
  } catch {
    return undefined;
  }
}

/** The descriptor a path names: /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N, /proc/self/fd/N. */
function descriptorNamed(path: string): number | undefined {
  const std = /^\/dev\/(stdin|stdout|stderr)$/.exec(path);
  if (std !== null) return ['stdin', 'stdout', 'stderr'].indexOf(std[1] ?? '');
  const fd = /^(?:\/dev|\/proc\/(self|thread-self|\d+))\/fd\/(\d+)$/.exec(path);
  if (fd === null) return undefined;
  // Another process's descriptors (/proc/PID/fd/N) are paths to open, not ours to write on.
  if (fd[1] !== undefined && /^\d+$/.test(fd[1]) && Number(fd[1]) !== process.pid) return undefined;
  return Number(fd[2]);
}

/** How a destination is named in messages. */
export function describeDestination(destination: Destination): string {
  return destination.kind === 'stdout' ? 'stdout' : destination.path;
}
