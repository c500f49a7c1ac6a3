import { execFileSync } from 'node:child_process';
import { constants, openSync } from 'node:fs';
import { chmod, lstat, mkdir, open, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExtractError } from '../../src/errors.ts';
import { writeFileAtomic } from '../../src/outputs/atomic.ts';
import { destinationOf, followLinks } from '../../src/outputs/destination.ts';
import { checkSharedStdout, resolveOutput } from '../../src/outputs/target.ts';
import { writeDestination } from '../../src/outputs/write.ts';
import { useTempDirs } from './helpers.ts';

const tempDir = useTempDirs();

async function fifoIn(dir: string): Promise<string> {
  const path = join(dir, 'pipe');
  execFileSync('mkfifo', [path]);
  return path;
}

async function failure(write: Promise<unknown>): Promise<ExtractError> {
  const err: unknown = await write.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ExtractError)) throw new Error(`expected an ExtractError, got ${String(err)}`);
  return err;
}

describe('destination: what -o and --report name', () => {
  it('destination: - and every name of fd 1 are stdout; other descriptors are written on, not opened', async () => {
    const cwd = await tempDir();
    for (const path of ['-', '/dev/stdout', '/dev/fd/1', '/proc/self/fd/1', `/proc/${process.pid}/fd/1`])
      expect(destinationOf(path, cwd), path).toEqual({ kind: 'stdout' });
    expect(destinationOf('/dev/stderr', cwd)).toEqual({ kind: 'fd', fd: 2, path: '/dev/stderr' });
    expect(destinationOf('/dev/fd/63', cwd)).toEqual({ kind: 'fd', fd: 63, path: '/dev/fd/63' });
    expect(destinationOf('/proc/self/fd/7', cwd)).toMatchObject({ kind: 'fd', fd: 7 });
    // A link to /dev/stdout (itself a link to /proc/self/fd/1) is stdout: the walk stops at the name.
    await symlink('/dev/stdout', join(cwd, 'out'));
    expect(destinationOf('out', cwd)).toEqual({ kind: 'stdout' });
  });

  it('destination: a device, a FIFO are streams; a file, a dangling link and a link loop are files', async () => {
    const cwd = await tempDir();
    expect(destinationOf('/dev/null', cwd)).toEqual({ kind: 'stream', type: 'device', path: '/dev/null' });
    const fifo = await fifoIn(cwd);
    expect(destinationOf('pipe', cwd)).toEqual({ kind: 'stream', type: 'fifo', path: fifo });
    await symlink('pipe', join(cwd, 'to-pipe'));
    expect(destinationOf('to-pipe', cwd)).toMatchObject({ kind: 'stream', type: 'fifo' });
    await symlink('nowhere/made.json', join(cwd, 'dangling'));
    expect(destinationOf('dangling', cwd)).toEqual({ kind: 'file', path: join(cwd, 'dangling') });
    expect(followLinks(join(cwd, 'dangling'))).toEqual({ path: join(cwd, 'nowhere', 'made.json') });
    await symlink('loop-b', join(cwd, 'loop-a'));
    await symlink('loop-a', join(cwd, 'loop-b'));
    expect(destinationOf('loop-a', cwd)).toEqual({ kind: 'file', path: join(cwd, 'loop-a') });
  });

  it('destination: a relative link is read from its real directory, .. included', async () => {
    const cwd = await tempDir();
    await mkdir(join(cwd, 'real', 'deep'), { recursive: true });
    await symlink(join(cwd, 'real', 'deep'), join(cwd, 'alias'));
    await symlink('../target.jsonl', join(cwd, 'real', 'deep', 'link.jsonl'));
    // Through alias/, `..` is real/ (the kernel's reading), not cwd (a lexical reading of alias/..).
    expect(followLinks(join(cwd, 'alias', 'link.jsonl')).path).toBe(join(cwd, 'real', 'target.jsonl'));
  });

  it('resolveOutput: a stream without an extension is JSON Lines, with one its format; --format dir is refused', async () => {
    const cwd = await tempDir();
    expect(resolveOutput({ out: '/dev/null', cwd })).toMatchObject({ kind: 'stream', format: 'jsonl' });
    expect(resolveOutput({ out: '/dev/fd/63', cwd, format: 'csv' })).toMatchObject({ kind: 'stream', format: 'csv' });
    expect(resolveOutput({ out: '/dev/stdout', cwd })).toEqual({ kind: 'stdout', format: 'jsonl' });
    expect(() => resolveOutput({ out: '/dev/null', cwd, format: 'dir' })).toThrow(/--format dir needs a directory/);
  });

  it('checkSharedStdout: records and report cannot both be stdout (a dry run prints its plan there)', async () => {
    const cwd = await tempDir();
    const stdout = resolveOutput({ cwd });
    const file = resolveOutput({ out: 'r.jsonl', cwd });
    expect(() => checkSharedStdout(stdout, '-', false, cwd)).toThrow(/would both go to stdout/);
    expect(() => checkSharedStdout(stdout, '/dev/stdout', false, cwd)).toThrow(/would both go to stdout/);
    expect(() => checkSharedStdout(file, '-', true, cwd)).toThrow(/dry run's plan .*stdout/);
    expect(() => checkSharedStdout(file, '-', false, cwd)).not.toThrow();
    expect(() => checkSharedStdout(stdout, 'report.json', false, cwd)).not.toThrow();
    expect(() => checkSharedStdout(stdout, undefined, false, cwd)).not.toThrow();
  });
});

describe('writeFileAtomic: a file keeps what it is', () => {
  it('writeFileAtomic: a symlink is written through; its target is replaced, the link stays', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'real.jsonl'), 'old\n');
    await symlink('real.jsonl', join(dir, 'link.jsonl'));
    const before = await stat(join(dir, 'real.jsonl'));
    await writeFileAtomic(join(dir, 'link.jsonl'), ['new\n']);
    expect((await lstat(join(dir, 'link.jsonl'))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(dir, 'real.jsonl'), 'utf8')).toBe('new\n');
    // Replaced by a rename, not rewritten in place: a reader sees the old file or the whole new one.
    expect((await stat(join(dir, 'real.jsonl'))).ino).not.toBe(before.ino);
    await symlink('made.jsonl', join(dir, 'dangling.jsonl'));
    await writeFileAtomic(join(dir, 'dangling.jsonl'), ['made\n']);
    expect((await lstat(join(dir, 'dangling.jsonl'))).isSymbolicLink()).toBe(true);
    expect(await readFile(join(dir, 'made.jsonl'), 'utf8')).toBe('made\n');
  });

  it('writeFileAtomic: the replaced file keeps its mode (0600, 0640, 0755), not the umask', async () => {
    const dir = await tempDir();
    for (const mode of [0o600, 0o640, 0o755]) {
      const path = join(dir, `out-${mode.toString(8)}.csv`);
      await writeFile(path, 'old\n');
      await chmod(path, mode);
      await writeFileAtomic(path, ['new\n']);
      expect(((await stat(path)).mode & 0o7777).toString(8)).toBe(mode.toString(8));
    }
    const fresh = join(dir, 'fresh.csv');
    await writeFileAtomic(fresh, ['x\n']);
    const umask = process.umask();
    expect((await stat(fresh)).mode & 0o777).toBe(0o666 & ~umask);
  });

  it('writeFileAtomic: a FIFO or a device is refused, never replaced', async () => {
    const dir = await tempDir();
    const fifo = await fifoIn(dir);
    await expect(writeFileAtomic(fifo, ['x\n'])).rejects.toMatchObject({ code: 'EEXIST' });
    expect((await stat(fifo)).isFIFO()).toBe(true);
  });
});

describe('writeDestination: streams and their failures', () => {
  it('writeDestination: a FIFO with no reader waits until the signal, then says so (interrupted); the FIFO stays', async () => {
    const dir = await tempDir();
    const fifo = await fifoIn(dir);
    const abort = new AbortController();
    const waiting: string[] = [];
    // The wait ends because of the signal, not on its own: it is still waiting when the signal
    // comes (a reader-less FIFO never opens), and it ends after it. If the signal did not reach
    // the wait (an open blocked in libuv's pool), the test hangs to its time-out.
    setTimeout(() => abort.abort(), 300);
    const err = await failure(
      writeDestination({ kind: 'stream', type: 'fifo', path: fifo }, ['{}\n'], {
        what: 'the output',
        signal: abort.signal,
        waiting: (m) => waiting.push(m),
      }),
    );
    expect(err.code).toBe('interrupted');
    expect(err.message).toContain(fifo);
    expect(waiting).toEqual([expect.stringContaining(`waiting for a reader to open ${fifo}`)]);
    expect(abort.signal.aborted).toBe(true);
    expect((await stat(fifo)).isFIFO()).toBe(true);
  });

  it('writeDestination: without waiting (an interrupted run), a FIFO with no reader is ENXIO at once', async () => {
    const dir = await tempDir();
    const fifo = await fifoIn(dir);
    const err = await failure(
      writeDestination({ kind: 'stream', type: 'fifo', path: fifo }, ['{}\n'], { what: 'the report', wait: false }),
    );
    expect(err.code).toBe('output');
    expect(err.message).toMatch(/^cannot write the report to .*pipe \(ENXIO\): nobody opened it for reading/);
  });

  it('writeDestination: a reader that comes gets every byte, in order', async () => {
    const dir = await tempDir();
    const fifo = await fifoIn(dir);
    const lines = Array.from({ length: 5000 }, (_, i) => `{"n":${i}}\n`);
    const writing = writeDestination({ kind: 'stream', type: 'fifo', path: fifo }, lines, { what: 'the output' });
    await new Promise((r) => setTimeout(r, 250));
    const reader = await open(fifo, 'r');
    const text = await reader.readFile('utf8');
    await reader.close();
    await writing;
    expect(text).toBe(lines.join(''));
  });

  it('writeDestination: a full device (ENOSPC, /dev/full on a descriptor: never renamed) is a clear output error', async () => {
    // The write stream closes the descriptor when it fails: closing it here too could close another's.
    const fd = openSync('/dev/full', constants.O_WRONLY);
    const err = await failure(
      writeDestination({ kind: 'fd', fd, path: `/dev/fd/${fd}` }, ['x'.repeat(10_000)], { what: 'the output' }),
    );
    expect(err.code).toBe('output');
    expect(err.message).toBe(
      `cannot write the output to /dev/fd/${fd} (ENOSPC): no space left on its device: free some space or choose another path`,
    );
  });

  it('writeDestination: a Unix socket is connected to and written, not replaced', async () => {
    const dir = await tempDir();
    const path = join(dir, 'records.sock');
    let received = '';
    const server = createServer((socket) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString();
      });
    });
    await new Promise<void>((r) => server.listen(path, () => r()));
    try {
      const destination = destinationOf('records.sock', dir);
      expect(destination).toEqual({ kind: 'stream', type: 'socket', path });
      await writeDestination(destination, ['{"a":1}\n', '{"a":2}\n'], { what: 'the output' });
      await new Promise((r) => setTimeout(r, 100));
      expect(received).toBe('{"a":1}\n{"a":2}\n');
      expect((await lstat(path)).isSocket()).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('writeDestination: a directory named as a file is EISDIR, said so', async () => {
    const dir = await tempDir();
    const err = await failure(writeDestination({ kind: 'file', path: dir }, ['{}\n'], { what: 'the report' }));
    expect(err.message).toContain('(EISDIR): it is a directory: name a file');
  });

  it("writeDestination: a descriptor of Node's own (its event loop's pipes, epoll) is refused, never written into", async () => {
    const { readdirSync, readlinkSync } = await import('node:fs');
    const links = new Map<number, string>();
    for (const fd of readdirSync('/proc/self/fd').map(Number)) {
      try {
        links.set(fd, readlinkSync(`/proc/self/fd/${fd}`));
      } catch {
        // The directory's own descriptor, closed once read.
      }
    }
    const pipes = [...links.values()].filter((l) => l.startsWith('pipe:'));
    // Only descriptors that are surely Node's: its epoll, eventfd, io_uring, and pipes with both ends here.
    const own = [...links]
      .filter(
        ([, l]) => l.startsWith('anon_inode:') || (l.startsWith('pipe:') && pipes.filter((p) => p === l).length > 1),
      )
      .map(([fd]) => fd);
    expect(own.length).toBeGreaterThan(0);
    for (const fd of own) {
      const err = await failure(
        writeDestination({ kind: 'fd', fd, path: `/dev/fd/${fd}` }, ['{}\n'], { what: 'the output' }),
      );
      expect(err.message, String(fd)).toContain('(EBADF)');
    }
  });

  it('writeDestination: a descriptor that is not open is EBADF, said with what to do', async () => {
    const err = await failure(
      writeDestination({ kind: 'fd', fd: 987, path: '/dev/fd/987' }, ['{}\n'], { what: 'the output' }),
    );
    expect(err.code).toBe('output');
    expect(err.message).toContain('(EBADF): the file descriptor is not open for writing');
  });
});
