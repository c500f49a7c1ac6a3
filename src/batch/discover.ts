import {
  accessSync,
  constants,
  type Dirent,
  lstat,
  lstatSync,
  readdir,
  readdirSync,
  readlinkSync,
  realpathSync,
  stat,
  statSync,
  type Stats,
} from 'node:fs';
import type { Options as FastGlobOptions } from 'fast-glob';
import { basename, isAbsolute, matchesGlob, normalize, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { errnoCode } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { childPath, fromBytes, isInside, pathKey, printable, type FsPath } from './paths.ts';

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

/**
 * Turns the command line's inputs into files, in a stable order: inputs in the order given,
 * the matches of one pattern or directory sorted. Files are deduplicated by real path
 * (a symlink and its target, "./a.pdf" and "a.pdf" are one document).
 *
 * An input is a file, a directory (recursed), a fast-glob pattern, "!pattern" (an
 * exclusion, as in .gitignore), or "-" (newline-separated paths on standard input).
 *
 * Nothing found is a quiet night when every input was a folder or the list on stdin (cron's
 * `find … -newer last-run | extract -`): `nothingIn` says so. A pattern or a path that names
 * nothing is a usage error, as a typo is.
 *
 * Every file of the batch at once: streamInputs is the same, a chunk at a time.
 */
export async function discoverInputs(inputs: string[], options: DiscoverOptions): Promise<Discovery> {
  const { chunks, found } = streamInputs(inputs, options);
  const files: InputFile[] = [];
  for await (const chunk of chunks) for (const file of chunk) files.push(file);
  const { unreadable, unmatched, linksNotFollowed, hidden, nothingIn } = found;
  return {
    files,
    unreadable,
    unmatched,
    linksNotFollowed,
    hidden,
    ...(nothingIn === undefined ? {} : { nothingIn }),
  };
}

/**
 * discoverInputs a chunk at a time: what it holds does not grow with a folder's files (the
 * names of the folders being walked, a record per folder; see FolderWalk and Seen).
 */
export function streamInputs(inputs: string[], options: StreamOptions): DiscoveryStream {
  const found: DiscoveryStream['found'] = { files: 0, unreadable: [], unmatched: [], linksNotFollowed: [], hidden: [] };
  return { found, chunks: discover(inputs, options, found) };
}

async function* discover(
  inputs: string[],
  options: StreamOptions,
  found: DiscoveryStream['found'],
): AsyncGenerator<InputFile[], void, undefined> {
  const size = Math.max(1, options.chunk ?? 1000);
  const exclusions = [
    ...options.ignore,
    ...inputs.filter((i) => i.startsWith('!') && i.length > 1).map((i) => i.slice(1)),
  ];
  // The list on stdin is read whole, as before: it is the user's own list of the batch.
  const positives: FsPath[] = [];
  let emptyList = false;
  for (const input of inputs) {
    if (input === '-') {
      const listed = await readPathList(options.stdin);
      if (listed.length === 0) emptyList = true;
      positives.push(...listed);
    } else if (!(input.startsWith('!') && input.length > 1)) positives.push(input);
  }

  let chunk: InputFile[] = [];
  const take = (): InputFile[] => {
    const full = chunk;
    found.files += full.length;
    chunk = [];
    return full;
  };
  // Files found so far, and what could not be read: what tells an input that found nothing.
  const reached = (): number => found.files + chunk.length + found.unreadable.length;
  const seen = new Seen();
  const excluded = (file: string): boolean =>
    exclusions.length > 0 && exclusions.some((pattern) => matchesExclusion(file, pattern, options.cwd));

  // Synchronous on purpose: a run over thousands of files is bound by these syscalls, and the
  // thread pool's round trips cost more than the calls themselves.
  // `inside`: the real folder a pattern's match must stay in (unless --follow-links).
  const add = (input: FsPath, explicit = false, inside?: { root: FsPath; name: string }, rel?: string): void => {
    const file = printable(input);
    const path = typeof input === 'string' ? resolve(options.cwd, input) : resolveBytes(options.cwd, input);
    let realPath: FsPath;
    let info: Stats;
    try {
      realPath = realPathOf(path);
      if (inside !== undefined && !isInside(realPath, inside.root)) {
        found.linksNotFollowed.push(notFollowed(file, realPath, inside.name));
        return;
      }
      info = statSync(realPath);
      if (!info.isFile()) return;
      accessSync(realPath, constants.R_OK);
    } catch (err) {
      found.unreadable.push({ file, reason: `cannot read ${file}: ${describeFsError(err)}` });
      return;
    }
    const key = pathKey(realPath);
    if (!seen.first(realPath, key)) return;
    chunk.push({
      file,
      path,
      realPath: key,
      size: info.size,
      explicit,
      stamp: stampOf(info),
      rel: rel ?? basename(file),
      within: inside?.root,
    });
  };
  // extract watch's paths: each kept to the watched folder it is in (absent: named by the user).
  const foundIn = (options.foundIn ?? []).map((f) => ({ path: resolve(options.cwd, f), name: f }));
  const folderOf = (input: FsPath): { root: FsPath; name: string; rel: string } | undefined => {
    if (typeof input !== 'string' || options.followLinks === true) return undefined;
    const path = resolve(options.cwd, input);
    const folder = foundIn.find((f) => path === f.path || path.startsWith(f.path + sep));
    const real = folder === undefined ? undefined : realFolder(folder.path, folder.name);
    return real === undefined || folder === undefined ? undefined : { ...real, rel: relative(folder.path, path) };
  };

  // A named file that does not exist fails that input; if nothing at all matched, the run is a usage error.
  const missing: string[] = [];
  const emptyFolders: string[] = [];
  let patternMissed = false;
  for (const input of positives) {
    const name = printable(input);
    const before = reached();
    const linksBefore = found.linksNotFollowed.length;
    const kind = await classify(input, options.cwd);
    const watched = foundIn.length > 0 ? folderOf(input) : undefined;
    if (watched !== undefined && kind === 'directory') {
      // A watched path is a file: a folder there is one reached through a link, never walked as a root.
      continue;
    }
    if (kind === 'file') {
      if (excluded(name)) continue;
      if (watched !== undefined) add(input, false, watched, watched.rel);
      else add(input, foundIn.length === 0);
      if (chunk.length >= size) yield take();
    } else if (kind === 'directory') {
      // join(input, rel) for each entry, without normalising the same folder 20,000 times.
      const folder = normalize(name);
      const prefix = folder === '.' || folder === `.${sep}` ? '' : folder.endsWith(sep) ? folder : folder + sep;
      const root = typeof input === 'string' ? resolve(options.cwd, input) : resolveBytes(options.cwd, input);
      const walk = new FolderWalk(root, {
        name,
        prefix,
        exclusions,
        excluded,
        followLinks: options.followLinks === true,
        hidden: options.hidden === true,
        seen,
        found,
      });
      while (!walk.fill(chunk, size)) yield take();
      // Links left out do not make a folder less empty: the line that counts them comes first.
      if (reached() === before) emptyFolders.push(name);
      continue;
    } else if (kind === 'pattern' && typeof input === 'string') {
      // The glob engine loads only for a pattern: a list of files or folders does without it.
      // A pattern's matches are held (fast-glob returns them at once), as the list on stdin is.
      const { default: fg } = await import('fast-glob');
      const matches = await fg(input, {
        cwd: options.cwd,
        onlyFiles: true,
        // As a shell's glob: hidden names only when asked for (a pattern may still name a dot).
        dot: options.hidden === true,
        ignore: exclusions,
        suppressErrors: true,
        followSymbolicLinks: true,
        fs: bytesFs(options.cwd),
      });
      // A pattern walks the folder before its first wildcard: its matches stay in that folder as a walk's do.
      const base = fg.generateTasks([input])[0]?.base ?? '.';
      const inside = options.followLinks === true ? undefined : realFolder(resolve(options.cwd, base), base);
      for (const m of matches.sort()) {
        // fast-glob reads names as UTF-8: a match holding U+FFFD stands for a name that is not.
        const rel = relative(base, m);
        if (m.includes('\uFFFD')) for (const path of namesBehind(m, options.cwd)) add(path, false, inside, rel);
        else add(m, false, inside, rel);
        if (chunk.length >= size) yield take();
      }
      if (reached() === before && found.linksNotFollowed.length === linksBefore) patternMissed = true;
    } else {
      missing.push(name);
      continue;
    }
    if (reached() === before) found.unmatched.push(name);
  }
  if (chunk.length > 0) yield take();

  if (found.files === 0 && found.unreadable.length === 0) {
    if (
      missing.length === 0 &&
      !patternMissed &&
      (emptyFolders.length > 0 || emptyList || found.linksNotFollowed.length > 0)
    ) {
      const why = [
        ...(emptyFolders.length > 0
          ? [`${emptyFolders.join(', ')} hold${emptyFolders.length === 1 ? 's' : ''} no files`]
          : []),
        ...(emptyList ? ['the list on standard input was empty'] : []),
      ];
      found.nothingIn = why.length > 0 ? why.join('; ') : 'every file found is a link out of its folder';
      return;
    }
    const named = positives.length === 0 ? '(none given)' : positives.map((p) => `"${printable(p)}"`).join(', ');
    const hint = exclusions.length > 0 ? ` after excluding ${exclusions.map((p) => `"${p}"`).join(', ')}` : '';
    throw new ExtractError(
      'no_input',
      `no input file matched ${named}${hint}: check the paths, or quote glob patterns so the shell does not expand them`,
    );
  }
  for (const m of missing) found.unreadable.push({ file: m, reason: `${m}: no such file or directory` });
}

/**
 * Which files were found already: a real path is yielded once, the first time it is found.
 *
 * A file is found in one of two ways. (1) As a plain entry (not a symbolic link) of a folder a
 * walk lists: its real path is the folder's real path and its name, and a walk lists each real
 * folder once, so within one walk these never repeat, and nothing is held for them: a folder
 * of 100,000 files walked with no link to a file in it holds no path. (2) Any other way: a
 * file named, a line on stdin, a pattern's match (those lists are held anyway), a symbolic link
 * a walk follows to a file (few): their real paths are held in `taken`.
 *
 * So a file found is a duplicate iff its real path is in `taken`, or a walk listed it as a
 * plain entry before: that walk's record of the file's folder (FolderWalk.listed: the folder's
 * place in the walk, and, while it is walked, the entry in progress) says whether it did. A
 * plain entry asks only the walks before its own that listed its folder (overlapping folders:
 * `extract inv inv/2024`), found once per folder; a link or a named file asks every walk.
 * Nothing in it grows with a folder's files, only with the folders walked and the files found
 * the second way.
 *
 * The records say what the folders held when they were listed: a file that appears in a folder
 * already listed, during discovery, and that a later input or link reaches too, is taken as
 * found already (the next run finds it).
 */
class Seen {
  /** Real paths of the files found other than as a walk's plain entry. */
  readonly taken = new Set<string>();
  readonly walks: FolderWalk[] = [];

  /** Whether a file found other than as a plain entry is found for the first time (then it is taken). */
  first(realPath: FsPath, key: string): boolean {
    if (this.taken.has(key)) return false;
    if (this.walks.length > 0) {
      const [dir, name] = splitPath(realPath);
      const dirKey = pathKey(dir);
      const shown = printable(name);
      if (this.walks.some((walk) => walk.listed(dirKey, name, shown))) return false;
    }
    this.taken.add(key);
    return true;
  }
}

/** A path's folder and name, each a string when it is UTF-8 (as the walk keeps them). */
function splitPath(path: FsPath): [FsPath, FsPath] {
  if (typeof path === 'string') {
    const at = path.lastIndexOf('/');
    return [at <= 0 ? '/' : path.slice(0, at), path.slice(at + 1)];
  }
  const at = path.lastIndexOf(0x2f);
  return [at <= 0 ? '/' : fromBytes(path.subarray(0, at)), fromBytes(path.subarray(at + 1))];
}

const BYTES = { encoding: 'buffer' } as const;

/**
 * The file system as the glob engine sees it, with names that are not UTF-8 reached: the engine
 * joins names it read as UTF-8 (U+FFFD for each byte that is not), so a folder so named would
 * open nothing and the files under it would be missed. A path holding U+FFFD is looked up by
 * its bytes (namesBehind) before each call; every other path goes straight to node:fs.
 */
function bytesFs(cwd: string): NonNullable<FastGlobOptions['fs']> {
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
function namesBehind(match: string, cwd: string): FsPath[] {
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
function realPathOf(path: FsPath): FsPath {
  return typeof path === 'string' ? realpathSync(path) : fromBytes(realpathSync.native(path, BYTES));
}

/** A path read as bytes (from stdin), against the working directory. */
function resolveBytes(cwd: string, path: Buffer): FsPath {
  return path[0] === 0x2f ? fromBytes(path) : childPath(resolve(cwd), fromBytes(path));
}

/** The real path of a pattern's folder, or undefined when it has none (then no match can be in it anyway). */
function realFolder(folder: string, name: string): { root: FsPath; name: string } | undefined {
  try {
    return { root: realpathSync(folder), name: name.endsWith('/') ? name : `${name}/` };
  } catch {
    return undefined;
  }
}

function notFollowed(file: string, target: FsPath, folder: string): LinkNotFollowed {
  const shown = printable(target);
  return {
    file,
    target: shown,
    folder,
    reason: `a symbolic link that leads outside ${folder} (to ${shown}): --follow-links follows it, or name it by itself`,
  };
}

async function classify(input: FsPath, cwd: string): Promise<'file' | 'directory' | 'pattern' | 'missing'> {
  try {
    const info = statSync(typeof input === 'string' ? resolve(cwd, input) : resolveBytes(cwd, input));
    return info.isDirectory() ? 'directory' : 'file';
  } catch (err) {
    // A name that exists wins over its reading as a pattern ("report[1].pdf" is a file).
    if (
      typeof input === 'string' &&
      /[*?[\]{}()!@+]/.test(input) &&
      (await import('fast-glob')).default.isDynamicPattern(input)
    )
      return 'pattern';
    return errnoCode(err) === 'ENOENT' ? 'missing' : 'file';
  }
}

/** A folder a walk has reached: while it is walked, its sorted names and where the walk is in them. */
type Frame = {
  dir: FsPath;
  realDir: FsPath;
  rel: string;
  /** Sorted by `keys`; both dropped once the folder is done. */
  names: FsPath[];
  /** The printable names (the same array as `names` when every name is a string). */
  keys: string[];
  /** The next name to look at. */
  index: number;
  /** The key of what is in progress: a name, or a subfolder's name + "/" while it is walked. */
  cursor: string;
  /** Subfolders met, not walked yet, sorted by key: each is walked at its key's place. */
  pending: Subfolder[];
  /** The folder's record in walks before this one that listed it too (overlapping inputs). */
  earlier: Array<{ walk: FolderWalk; rel: string }>;
  done: boolean;
  /** False when the listing failed: nothing in it was found. */
  listed: boolean;
};
type Subfolder = { key: string; path: FsPath; realPath: FsPath; rel: string };

type WalkOptions = {
  /** The input as given, printable; `prefix` joins it to each path found. */
  name: string;
  prefix: string;
  exclusions: string[];
  /** The batch's exclusions, matched against the path as given (`prefix` + rel). */
  excluded: (file: string) => boolean;
  followLinks: boolean;
  /** Hidden names walked as any other; else left out and named in `found.hidden`. */
  hidden: boolean;
  seen: Seen;
  found: DiscoveryStream['found'];
};

/**
 * The files under a folder, sorted by their path in it, found a chunk at a time: an entry that
 * is not a symbolic link has its folder's real path and its name as real path, so it costs one
 * lstat (which the stat cache needs anyway) and no realpath. Symbolic links are followed (each
 * folder once) while they stay under the folder, anywhere with `followLinks`; hidden names are
 * skipped and named (`hidden` walks them), as are folders and files an exclusion matches (not
 * named). What cannot be read (a folder, a broken link) is reported, never skipped in silence. A folder listing holding a name that is
 * not UTF-8 is read again as bytes (paths.ts): the common listing stays one call of strings.
 *
 * The order without holding the files: each folder's names are sorted, and a subfolder is
 * walked (depth first) at the place its name + "/" sorts at among its siblings, which is the
 * order of the whole paths compared with `<` ("a-b" and "a.pdf" before folder a's files, "a0"
 * after them). A subfolder is met at its name's place and waits (`pending`) until its key's.
 * Which of two ways to one real folder is walked (a link inside the tree and the folder
 * itself): the first in that order. Links left out and what cannot be read come in the same
 * order (the links' list is sorted, as before). One order differs from the old sort of every
 * path: two sibling folders whose names print the same (one not UTF-8) are walked one after
 * the other, where the old sort interleaved their files.
 */
class FolderWalk {
  readonly #options: WalkOptions;
  readonly #stack: Frame[] = [];
  /** Each real folder reached, by pathKey: a walk lists it once. */
  readonly #folders = new Map<string, Frame>();
  #realRoot: FsPath = '/';

  constructor(root: FsPath, options: WalkOptions) {
    this.#options = options;
    try {
      this.#realRoot = realPathOf(root);
    } catch (err) {
      this.#unreadable('', describeFsError(err));
      return;
    }
    options.seen.walks.push(this);
    this.#enter(root, this.#realRoot, '');
  }

  /** Adds found files to `out` until it holds `size`: false then, true once the walk is done. */
  fill(out: InputFile[], size: number): boolean {
    const stack = this.#stack;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as Frame;
      const next = frame.pending[0];
      if (frame.index < frame.keys.length) {
        const shown = frame.keys[frame.index] as string;
        if (next !== undefined && next.key < shown) {
          frame.pending.shift();
          frame.cursor = next.key;
          this.#enter(next.path, next.realPath, next.rel);
          continue;
        }
        frame.cursor = shown;
        this.#entry(frame, frame.names[frame.index++] as FsPath, shown, out);
        if (out.length >= size) return false;
      } else if (next !== undefined) {
        frame.pending.shift();
        frame.cursor = next.key;
        this.#enter(next.path, next.realPath, next.rel);
      } else {
        stack.pop();
        frame.done = true;
        frame.names = [];
        frame.keys = [];
      }
    }
    return true;
  }

  /**
   * Whether this walk found, as a plain entry of the real folder `dirKey`, the file `name`
   * (printable: `shown`): it listed the folder, got past the name, and kept it.
   */
  listed(dirKey: string, name: FsPath, shown: string): boolean {
    const frame = this.#folders.get(dirKey);
    if (frame === undefined || !frame.listed) return false;
    if (!frame.done && !passed(frame, name, shown)) return false;
    return this.#kept(frame.rel, shown);
  }

  /** Whether a plain file `shown` in the folder at `rel` is one this walk yields (not hidden, not excluded). */
  #kept(rel: string, shown: string): boolean {
    if (!this.#options.hidden && shown.startsWith('.')) return false;
    const relPath = rel === '' ? shown : `${rel}/${shown}`;
    if (this.#options.exclusions.length > 0 && this.#ignored(relPath)) return false;
    return !this.#options.excluded(this.#options.prefix + relPath);
  }

  #ignored(rel: string): boolean {
    return this.#options.exclusions.some((pattern) => matchesGlob(rel, pattern));
  }

  #enter(dir: FsPath, realDir: FsPath, rel: string): void {
    const key = pathKey(realDir);
    if (this.#folders.has(key)) return;
    const earlier: Frame['earlier'] = [];
    for (const walk of this.#options.seen.walks) {
      const theirs = walk === this ? undefined : walk.#folders.get(key);
      if (theirs?.listed) earlier.push({ walk, rel: theirs.rel });
    }
    const frame: Frame = {
      dir,
      realDir,
      rel,
      names: [],
      keys: [],
      index: 0,
      cursor: '',
      pending: [],
      earlier,
      done: true,
      listed: false,
    };
    this.#folders.set(key, frame);
    // Names, not Dirents: each entry is stat'ed anyway (the stat cache needs its stamp), and
    // 20,000 Dirent objects would only add to what the garbage collector has to move.
    let names: FsPath[];
    try {
      names = listNames(dir);
    } catch (err) {
      this.#unreadable(rel, describeFsError(err));
      return;
    }
    if (names.every((n) => typeof n === 'string')) {
      // A string's default sort is by UTF-16 code units, as `<` compares.
      frame.names = (names as string[]).sort();
      frame.keys = frame.names as string[];
    } else {
      const keyed = names.map((n) => ({ n, k: printable(n) })).sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
      frame.names = keyed.map((e) => e.n);
      frame.keys = keyed.map((e) => e.k);
    }
    frame.listed = true;
    frame.done = false;
    this.#stack.push(frame);
  }

  #entry(frame: Frame, entry: FsPath, shown: string, out: InputFile[]): void {
    const options = this.#options;
    const relPath = frame.rel === '' ? shown : `${frame.rel}/${shown}`;
    if (options.exclusions.length > 0 && this.#ignored(relPath)) return;
    if (!options.hidden && shown.startsWith('.')) {
      this.#hidden(frame, entry, relPath);
      return;
    }
    // The folders are absolute and normalised, the name has no slash: join() would only cost.
    const path = childPath(frame.dir, entry);
    // Outside a symbolic link the two are the same string: one of them, not two copies.
    let realPath = frame.realDir === frame.dir ? path : childPath(frame.realDir, entry);
    let info = lstatSync(path, MAY_BE_GONE);
    const linked = info?.isSymbolicLink() === true;
    if (linked) {
      try {
        realPath = realPathOf(path);
      } catch (err) {
        this.#unreadable(relPath, brokenLink(path, err));
        return;
      }
      if (!options.followLinks && !isInside(realPath, this.#realRoot)) {
        const file = options.prefix + relPath;
        if (!options.excluded(file)) options.found.linksNotFollowed.push(notFollowed(file, realPath, options.name));
        return;
      }
      info = statSync(realPath, MAY_BE_GONE);
    }
    if (info === undefined) return;
    if (info.isDirectory()) {
      insertSorted(frame.pending, { key: `${shown}/`, path, realPath, rel: relPath });
      return;
    }
    if (!info.isFile()) return;
    let file = relPath;
    if (options.prefix !== '') {
      // A folder named by its absolute path: the name is the path, one string rather than two.
      const named = options.prefix + relPath;
      file = named === path ? path : named;
    }
    if (options.excluded(file)) return;
    const key = pathKey(realPath);
    if (linked ? !options.seen.first(realPath, key) : this.#repeated(frame, key, shown)) return;
    out.push({
      rel: relPath,
      file,
      path,
      realPath: key,
      size: info.size,
      explicit: false,
      stamp: stampOf(info),
      within: options.followLinks ? undefined : this.#realRoot,
    });
  }

  /** Names a hidden entry left out (not what an exclusion leaves out): a folder once, its files unlisted. */
  #hidden(frame: Frame, entry: FsPath, relPath: string): void {
    const { prefix, excluded, found } = this.#options;
    const file = prefix + relPath;
    if (excluded(file)) return;
    const folder = lstatSync(childPath(frame.dir, entry), MAY_BE_GONE)?.isDirectory() === true;
    found.hidden.push(folder ? `${file}/` : file);
  }

  /** Whether a plain entry was found before (Seen says why only this is asked). */
  #repeated(frame: Frame, key: string, shown: string): boolean {
    const { taken } = this.#options.seen;
    if (taken.size > 0 && taken.has(key)) return true;
    for (const { walk, rel } of frame.earlier) if (walk.#kept(rel, shown)) return true;
    return false;
  }

  #unreadable(rel: string, reason: string): void {
    const { prefix, name, found } = this.#options;
    const file = prefix + rel;
    found.unreadable.push({ file: file === '' ? name : file, reason: `cannot read ${file || name}: ${reason}` });
  }
}

/** Whether the walk of a folder in progress got past `name` (which is not the entry in progress). */
function passed(frame: Frame, name: FsPath, shown: string): boolean {
  if (shown !== frame.cursor) return shown < frame.cursor;
  // Two names that print the same (one not UTF-8): the one in progress is at index - 1.
  const key = pathKey(name);
  for (let i = frame.index - 2; i >= 0 && frame.keys[i] === shown; i--)
    if (pathKey(frame.names[i] as FsPath) === key) return true;
  return false;
}

/** Into a short list sorted by key, after those of the same key. */
function insertSorted(list: Subfolder[], folder: Subfolder): void {
  let at = list.length;
  while (at > 0 && folder.key < (list[at - 1] as Subfolder).key) at--;
  list.splice(at, 0, folder);
}

/**
 * A folder's names: strings, as Node reads them; read again as bytes only when one of them
 * came back with U+FFFD (a name that is not UTF-8, or, rarely, one that holds U+FFFD itself).
 */
function listNames(dir: FsPath): FsPath[] {
  if (typeof dir === 'string') {
    const names = readdirSync(dir);
    if (!names.some((n) => n.includes('\uFFFD'))) return names;
  }
  return readdirSync(dir, BYTES).map(fromBytes);
}

/** Why a symbolic link cannot be read: where it points, when it points at nothing. */
function brokenLink(path: FsPath, err: unknown): string {
  if (errnoCode(err) === 'ELOOP') return 'a loop of symbolic links';
  if (errnoCode(err) !== 'ENOENT') return describeFsError(err);
  try {
    return `a symbolic link to ${printable(fromBytes(readlinkSync(path, BYTES)))}, which does not exist`;
  } catch {
    return 'a symbolic link to nothing';
  }
}

/** A file removed between the listing and its lstat is not there: skipped, as if listed a moment later. */
const MAY_BE_GONE = { throwIfNoEntry: false } as const;

/** The stamp of a stat: the walk's, and a read's (the fstat of the descriptor it read through). */
export function stampOf(info: Stats): FileStamp {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.dev}`;
}

/** The later of a stamp's mtime and ctime, in milliseconds. */
export function stampChangedMs(stamp: FileStamp): number {
  const [, mtime = '0', ctime = '0'] = stamp.split(':');
  return Math.max(Number(mtime), Number(ctime));
}

/** An exclusion matches the path as given, or its path relative to the working directory. */
function matchesExclusion(file: string, pattern: string, cwd: string): boolean {
  const rel = isAbsolute(file) ? relative(cwd, file) : file.replace(/^\.\//, '');
  return matchesGlob(rel, pattern) || matchesGlob(file, pattern) || matchesGlob(rel, `**/${pattern}`);
}

/**
 * The paths listed on stdin, one a line, read as bytes: `find` prints names as they are on
 * disk, so a line that is not UTF-8 is kept as bytes (paths.ts) and opens the file it names.
 */
async function readPathList(stdin: Readable | undefined): Promise<FsPath[]> {
  if (!stdin) return [];
  const chunks: Buffer[] = [];
  for await (const chunk of stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));
  const text = Buffer.concat(chunks);
  const paths: FsPath[] = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf(0x0a, start);
    if (end < 0) end = text.length;
    const line = fromBytes(trimBytes(text.subarray(start, end)));
    if (line.length > 0) paths.push(typeof line === 'string' ? line.trim() : line);
    start = end + 1;
  }
  return paths.filter((p) => p.length > 0);
}

/** Without the blanks (and a CR) around it, as String.prototype.trim does for ASCII. */
function trimBytes(line: Buffer): Buffer {
  let start = 0;
  let end = line.length;
  while (start < end && isBlank(line[start])) start++;
  while (end > start && isBlank(line[end - 1])) end--;
  return line.subarray(start, end);
}

const isBlank = (byte: number | undefined): boolean =>
  byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0b || byte === 0x0c;

export function describeFsError(err: unknown): string {
  const code = errnoCode(err);
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOENT') return 'no such file';
  return code ?? (err instanceof Error ? err.message : String(err));
}
