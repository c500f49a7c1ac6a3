/**
 * What the discover step hands on to the others: the input file (its path, real path, size and
 * stamp), what discovery found besides the files, and the stamp's and a file error's words.
 * The finding itself is discover/.
 */
import type { Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import type { FsPath } from './paths.ts';
import type { PartOf } from '../inputs/part.ts';

/**
 * A file to extract: `file` is the path as the user gave it, printable (records and outputs use
 * it); `path` is what opens it (bytes for a name that is not UTF-8: see paths.ts); `realPath`
 * is the key that tells files apart (a string, see pathKey).
 */
export type InputFile = {
  file: string;
  path: FsPath;
  realPath: string;
  size: number;
  /** Named by itself (or listed on stdin), not found in a directory or by a pattern: always sent. */
  explicit: boolean;
  /** What the stat cache compares (see batch/plan/stat-cache.ts); absent when the file was not stat'ed as such. */
  stamp?: FileStamp | undefined;
  /**
   * Its path under the folder it was found in (a folder walked, a pattern's folder), printable;
   * its name for a file named by itself. --move-done/--move-failed keep it under their folder.
   */
  rel?: string | undefined;
  /**
   * The real folder it must be in when it is read: the folder walked (or a pattern's, or the
   * watched folder it was found in), whose rule on links the read keeps (facts.ts openInput).
   * Absent for a file named by itself, and with --follow-links.
   */
  within?: FsPath | undefined;
  /**
   * A part of an input file (a member of an archive, an attachment of a mail: src/inputs/):
   * `path` is its bytes in the run's part space, `file` its name (`invoices.zip!a.pdf`), and
   * this the input file it is part of (what --move-done moves once all its parts are done).
   */
  part?: PartOf | undefined;
  /** Read from a URL into the part space (src/inputs/remote.ts): there is no file of the user's to move. */
  remote?: boolean | undefined;
  /**
   * A part refused on this machine (src/inputs/refusal.ts: an archive's `../` or link member, a
   * bomb), with the reason: failed by the send step unsent, at no cost, and set aside as a locked PDF is.
   */
  refused?: string | undefined;
};
/**
 * The parts of a file's stat that change when its content may have (git's index keeps the
 * same), as one string the stat cache compares whole: `size:mtimeMs:ctimeMs:ino:dev`. The
 * times are Node's milliseconds with their fraction (a double: a quarter of a microsecond
 * at today's dates), not BigInt nanoseconds: a BigInt stat makes 14 BigInts per file, a
 * tenth of a rerun's discovery, for a precision no change could use (see stat-cache.ts).
 */
export type FileStamp = string;
/** An input that named a file we cannot read: reported, and counted as failed. */
export type UnreadableInput = { file: string; reason: string };
/** A symbolic link a walk found that leads out of the folder walked: left out unless --follow-links. */
export type LinkNotFollowed = { file: string; target: string; folder: string; reason: string };
/**
 * `unmatched`: inputs that matched nothing while others did (worth a warning, not a failure).
 * `nothingIn`: set when no file was found and nothing asked for was missing (empty folders, an
 * empty list on stdin): what was empty, for the one line that says there is nothing to do.
 */
export type Discovery = {
  files: InputFile[];
  unreadable: UnreadableInput[];
  unmatched: string[];
  linksNotFollowed: LinkNotFollowed[];
  /**
   * Hidden files and folders (a name starting with a dot) a walk left out, as paths given (a
   * folder's with a trailing slash, its files unlisted): named, so every file under a folder is
   * accounted for. Empty with `hidden`.
   */
  hidden: string[];
  nothingIn?: string | undefined;
};

export type DiscoverOptions = {
  cwd: string;
  ignore: string[];
  stdin?: Readable | undefined;
  /** Follow symbolic links that lead out of a folder walked (or a pattern's folder). */
  followLinks?: boolean | undefined;
  /** Walk hidden files and folders (and let patterns match them) as any other. */
  hidden?: boolean | undefined;
  /**
   * The inputs are paths found in these folders (`extract watch`'s file events and rescans), not
   * named by the user: each is kept to the folder it is in as a walk's file is, so a link planted
   * there that leads out of it is left out unless --follow-links.
   */
  foundIn?: string[] | undefined;
};

export type StreamOptions = DiscoverOptions & {
  /** The most files a chunk holds (1,000). */
  chunk?: number | undefined;
  /** Reads a URL input (src/inputs/remote.ts); absent, a URL is an input this command does not read. */
  remote?: ((url: string) => Promise<InputFile | UnreadableInput>) | undefined;
  /** URLs read at once (a batch run's -c); 1 when absent. */
  remoteParallel?: number | undefined;
};

export type DiscoveryStream = {
  /**
   * The input files in discoverInputs' order, in chunks of at most `chunk` files, found as they
   * are iterated (a folder is walked as its chunks are taken). Iterate once. Throws at its end
   * where discoverInputs throws (no input matched: the same ExtractError).
   */
  chunks: AsyncIterable<InputFile[]>;
  /**
   * Filled as `chunks` is iterated; complete once it has ended: unreadable, unmatched,
   * linksNotFollowed, hidden, nothingIn, and `files`, the count of files yielded.
   */
  found: Omit<Discovery, 'files'> & { files: number };
};

/** The stamp of a stat: the walk's, and a read's (the fstat of the descriptor it read through). */
export function stampOf(info: Stats): FileStamp {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.dev}`;
}

/** The later of a stamp's mtime and ctime, in milliseconds. */
export function stampChangedMs(stamp: FileStamp): number {
  const [, mtime = '0', ctime = '0'] = stamp.split(':');
  return Math.max(Number(mtime), Number(ctime));
}
