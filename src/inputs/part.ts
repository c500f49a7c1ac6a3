/**
 * A document that is a part of an input file: a member of an archive (`invoices.zip!2026/a.pdf`),
 * an attachment of a mail (`mail.eml!invoice.pdf`), or a cut of a file (`scan.pdf#pages=3-4`).
 *
 * A part is an input file of its own to the rest of the run (batch/discover.ts InputFile): its
 * `file` is its name, its `path` a file in the run's private part space holding its bytes (so
 * the plan hashes them: its identity in the journal is its own content, and a zip sent again
 * with one new member pays for that member only), its `part` says what it is a part of (what
 * --move-done moves once every part of it is done). Readers of containers (zip, tar, mail)
 * and cutters of pages hand their parts to PartSpace.write and nothing else.
 */
import { closeSync, lstatSync, mkdtempSync, readdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { processAlive } from '../errno.ts';

/** What a part is a part of: the input file the user's folder holds (JSON-safe: the plan stores it on disk). */
export type PartOf = {
  /** The container's name as given (printable), as its records would show it. */
  file: string;
  /** Its path, when a string; `pathBase64` when the name is not UTF-8 (see paths.ts). */
  path?: string;
  pathBase64?: string;
  /** Its path under the folder it was found in (--move-done keeps it there). */
  rel?: string | undefined;
  /** Its real path: parts of one container share it. */
  realPath: string;
  /** The stat of the descriptor it was read through (batch/discover.ts FileStamp): --move-done moves only that file. */
  read: string;
};

/** How a part's name is made: a container's member after `!`, a cut after `#` (`scan.pdf#pages=3-4`). */
export type PartSeparator = '!' | '#';

/** The name of a part in records, reports, the journal and `status`: `invoices.zip!2026/a.pdf`. */
export function partName(container: string, member: string, separator: PartSeparator = '!'): string {
  return `${container}${separator}${member}`;
}

/** The outermost input file a part came from, as PartOf: the same for a part of a part (a zip in a mail). */
export function partOf(
  container: {
    file: string;
    path: string | Buffer;
    rel?: string | undefined;
    realPath: string;
    part?: PartOf | undefined;
  },
  read: string,
): PartOf {
  if (container.part !== undefined) return container.part;
  const path = container.path;
  return {
    file: container.file,
    ...(typeof path === 'string' ? { path } : { pathBase64: path.toString('base64') }),
    rel: container.rel,
    realPath: container.realPath,
    read,
  };
}

/** The container's path, to move it. */
export function containerPath(part: PartOf): string | Buffer {
  return part.path ?? Buffer.from(part.pathBase64 ?? '', 'base64');
}

/**
 * A file of the run's own, in a folder of the temp directory only this user can enter, removed
 * when the run ends (release). Parts are written under a folder per part named by a counter, with
 * the member's last name made safe: no name the archive holds is ever a path here, so no member
 * can be written outside the space whatever its name (`../`, `/etc/x`, a link).
 */
export class PartSpace {
  #root: string | undefined;
  #count = 0;
  readonly #dir: string;

  constructor(dir = tmpdir()) {
    this.#dir = dir;
  }

  /**
   * A new empty file of the space (made on first use), and the descriptor to write it through.
   * One folder, files numbered (`12-a.pdf`): a folder per part costs its own removal, many times a file's.
   */
  create(name: string): { path: string; fd: number } {
    // mkdtemp makes the root 0700: the files in it are this user's alone.
    if (this.#root === undefined) {
      removeKilledSpaces(this.#dir);
      this.#root = mkdtempSync(join(this.#dir, `extract-parts-${process.pid}-`));
    }
    const path = join(this.#root, `${this.#count++}-${safeName(name)}`);
    return { path, fd: openSync(path, 'wx', 0o600) };
  }

  /**
   * Writes `bytes` (a stream or a buffer) to a new file of the space, at most `max` bytes: a
   * stream that goes on past it is destroyed and `TooLarge` thrown (an archive whose sizes lie).
   */
  async write(name: string, bytes: Readable | Uint8Array, max: number): Promise<WrittenPart> {
    const { path, fd } = this.create(name);
    try {
      let size = 0;
      const put = (chunk: Uint8Array): void => {
        size += chunk.length;
        if (size > max) throw new TooLarge(size);
        for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at);
      };
      if (bytes instanceof Uint8Array) put(bytes);
      else
        try {
          for await (const chunk of bytes) put(chunk as Uint8Array);
        } finally {
          bytes.destroy();
        }
      return { path, size };
    } catch (err) {
      rmSync(path, { force: true });
      throw err;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * What to say when a part does not fit (ENOSPC, a quota): the folder to free, or the way to
   * put the space on a larger disk. Nothing that did not fit was sent or paid for; the next run
   * writes it again.
   */
  fullText(what = 'its parts'): string {
    return `no room left to write ${what} in ${this.#dir} (the run's part space): free space on that disk, or set TMPDIR to a folder on a larger one, and run again`;
  }

  /** Removes every part written (the run is over: the journal holds what they were). */
  release(): void {
    if (this.#root === undefined) return;
    try {
      rmSync(this.#root, { recursive: true, force: true });
    } catch {
      // Left in the temp directory, a folder of this user's only: the system's cleaner takes it.
    }
    this.#root = undefined;
  }
}

/**
 * The part spaces of this user's runs that were killed (kill -9, a power cut: release never ran),
 * told by the process id in their name no longer running. A live run's space is never touched; a
 * pid reused since only leaves an old space for the next run. A space named without a pid was
 * made by an earlier version of extract: removed once nothing has been written to it for a day.
 */
function removeKilledSpaces(dir: string, now = Date.now()): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // The temp directory unreadable: nothing of this run depends on it.
    return;
  }
  for (const name of names) {
    if (!name.startsWith('extract-parts-')) continue;
    try {
      const path = join(dir, name);
      const info = lstatSync(path);
      if (!info.isDirectory() || info.uid !== process.getuid?.()) continue;
      const pid = /^extract-parts-(\d+)-/.exec(name)?.[1];
      const dead = pid === undefined ? now - lastWritten(path, info.mtimeMs) > DAY_MS : !processAlive(Number(pid));
      if (dead) rmSync(path, { recursive: true, force: true });
    } catch {
      // A space gone meanwhile, or one that will not go: the next run tries again.
    }
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** When anything in a space was last written: the folder's own time moves only as names come and go. */
function lastWritten(path: string, folderMs: number): number {
  let latest = folderMs;
  for (const name of readdirSync(path)) latest = Math.max(latest, lstatSync(join(path, name)).mtimeMs);
  return latest;
}

export type WrittenPart = { path: string; size: number };

/** A part that grew past what its container may expand to. */
export class TooLarge extends Error {
  readonly size: number;
  constructor(size: number) {
    super(`expands past its bound (${size} bytes so far)`);
    this.size = size;
  }
}

/**
 * The name the service is told a part has (file_name): its member's own last name (`a.pdf` of
 * `x.zip!2026/a.pdf`), without a cut's pages (`scan.pdf` of `scan.pdf#pages=3-4`), so the name
 * keeps the extension a service may read the type from.
 */
export function ownName(partFile: string): string {
  return safeName(partFile.slice(partFile.lastIndexOf('!') + 1).replace(/#pages=[0-9,-]+$/, ''));
}

/**
 * A member's last name as a file name of the space: what the service is told the file is called
 * (file_name), and the extension MIME detection falls back on. Separators and control characters
 * become `_`; an empty or dot name becomes `part`.
 */
function safeName(member: string): string {
  const last =
    member
      .split(/[\\/]/)
      .filter((p) => p !== '')
      .pop() ?? '';
  const cleaned = last.replace(/[\u0000-\u001f\u007f]/g, '_').slice(-200);
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'part' : cleaned;
}
