import {
  constants,
  createWriteStream,
  existsSync,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
} from 'node:fs';
import { Socket, createConnection } from 'node:net';
import { once } from 'node:events';
import { open } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasErrno } from '../errno.ts';
import type { StreamDestination } from './destination.ts';

/** How often a FIFO with no reader is tried again: a reader that comes is served within this. */
const FIFO_RETRY_MS = 100;

export type StreamOptions = {
  /** Stops the wait for a FIFO's reader, and a write that is stuck (SIGINT/SIGTERM). */
  signal?: AbortSignal | undefined;
  /** Whether to wait for a FIFO's reader at all: an interrupted run tries once and goes on. */
  wait?: boolean | undefined;
  /** Said once, when a FIFO has no reader yet and the run waits for one. */
  waiting?: ((message: string) => void) | undefined;
  /** The process's stderr (fd 2), which its owner keeps open. */
  stderr?: Writable | undefined;
};

/**
 * Writes `chunks` to a device, a FIFO, a socket or an open descriptor as a stream: no temp
 * file, no rename (which would replace the device or the pipe with a regular file).
 */
export async function writeStream(
  destination: StreamDestination,
  chunks: Iterable<string> | AsyncIterable<string>,
  options: StreamOptions,
): Promise<void> {
  if (destination.kind === 'fd' && destination.fd === 2 && options.stderr !== undefined) {
    await pipeline(Readable.from(chunks), options.stderr, { end: false, signal: options.signal });
    return;
  }
  const sink = await _open(destination, options);
  await pipeline(Readable.from(chunks), sink, { signal: options.signal });
}

async function _open(destination: StreamDestination, options: StreamOptions): Promise<Writable> {
  if (destination.kind === 'fd') {
    // Written on the descriptor itself, as `cmd >&N` would: opening /proc/self/fd/N anew fails for
    // a socket, and would truncate or rewind a file the shell opened for appending.
    checkDescriptor(destination.fd);
    const info = fstatSync(destination.fd);
    if (info.isFIFO() || info.isSocket()) return new Socket({ fd: destination.fd, readable: false, writable: true });
    return createWriteStream(destination.path, { fd: destination.fd });
  }
  switch (destination.type) {
    case 'fifo':
      return new Socket({ fd: await _openFifo(destination.path, options), readable: false, writable: true });
    case 'socket': {
      const socket = createConnection({ path: destination.path });
      await once(socket, 'connect', { signal: options.signal });
      return socket;
    }
    case 'device':
      // No O_CREAT: a device that went away is an error, not a new regular file in its place.
      return (await open(destination.path, constants.O_WRONLY | constants.O_NOCTTY)).createWriteStream();
  }
}

/**
 * Throws EBADF unless `fd` is a descriptor the process was handed for writing (`3>FILE`,
 * bash's `>(cmd)`). Node holds descriptors of its own (epoll, eventfd, io_uring, the pipes that
 * wake its event loop): a number the shell did not open may be one of them, and writing into
 * it aborts the process. On Linux such a descriptor is told by /proc: an anon_inode, a pipe
 * whose other end is ours too, or one open for reading only. Elsewhere fstat is all there is.
 */
export function checkDescriptor(fd: number): void {
  fstatSync(fd);
  if (!existsSync('/proc/self/fd')) return;
  const link = readlinkSync(`/proc/self/fd/${fd}`);
  const flags = Number.parseInt(
    /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '0',
    8,
  );
  // O_ACCMODE (3) is not among Node's constants.
  const readOnly = (flags & 0o3) === constants.O_RDONLY;
  const internal =
    link.startsWith('anon_inode:') ||
    (link.startsWith('pipe:') &&
      readdirSync('/proc/self/fd').some((other) => Number(other) !== fd && _linkOf(other) === link));
  if (readOnly || internal)
    throw Object.assign(new Error(`descriptor ${fd} was not handed to this process for writing`), { code: 'EBADF' });
}

function _linkOf(fd: string): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Opens a FIFO for writing without blocking: a blocking open waits in a thread of libuv's
 * pool until a reader comes, and no signal reaches it (SIGTERM is ignored for as long as no
 * reader comes). Non-blocking, an open with no reader fails at once (ENXIO), and is tried again on a
 * timer that the signal can stop.
 */
async function _openFifo(path: string, options: StreamOptions): Promise<number> {
  let said = false;
  for (;;) {
    try {
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (err) {
      if (!hasErrno(err, 'ENXIO') || options.wait === false) throw err;
    }
    if (!said) options.waiting?.(`waiting for a reader to open ${path} (SIGINT or SIGTERM stops waiting)`);
    said = true;
    await sleep(FIFO_RETRY_MS, undefined, { signal: options.signal });
  }
}
