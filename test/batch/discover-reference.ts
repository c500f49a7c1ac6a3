/**
 * THE REFERENCE: src/batch/discover.ts as it was before discovery streamed (main at d6351ba),
 * kept for test/batch/discover-property.test.ts to compare the streaming walk with. It holds
 * every file of the batch at once, then sorts; do not use it outside the tests. One marked
 * change ("REFERENCE CHANGE") makes it independent of the file system's listing order.
 */
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
import { errnoCode } from '../../src/errno.ts';
import { ExtractError } from '../../src/errors.ts';
import { childPath, fromBytes, isInside, pathKey, printable, type FsPath } from '../../src/batch/paths.ts';

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
  nothingIn?: string | undefined;
};

export type DiscoverOptions = {
  cwd: string;
  ignore: string[];
  stdin?: Readable | undefined;
  /** Follow symbolic links that lead out of a folder walked (or a pattern's folder). */
  followLinks?: boolean | undefined;
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
 */
export async function referenceDiscoverInputs(inputs: string[], options: DiscoverOptions): Promise<Discovery> {
  const exclusions = [
    ...options.ignore,
    ...inputs.filter((i) => i.startsWith('!') && i.length > 1).map((i) => i.slice(1)),
  ];
  const positives: FsPath[] = [];
  let emptyList = false;
  for (const input of inputs) {
    if (input === '-') {
      const listed = await readPathList(options.stdin);
      if (listed.length === 0) emptyList = true;
      positives.push(...listed);
    } else if (!(input.startsWith('!') && input.length > 1)) positives.push(input);
  }

  const found: Discovery = { files: [], unreadable: [], unmatched: [], linksNotFollowed: [] };
  const seen = new Set<string>();
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
    push({
      file,
      path,
      realPath: pathKey(realPath),
      size: info.size,
      explicit,
      stamp: stampOf(info),
      rel: rel ?? basename(file),
    });
  };
  const push = (input: InputFile): void => {
    if (seen.has(input.realPath)) return;
    seen.add(input.realPath);
    found.files.push(input);
  };

  // A named file that does not exist fails that input; if nothing at all matched, the run is a usage error.
  const missing: string[] = [];
  const emptyFolders: string[] = [];
  let patternMissed = false;
  for (const input of positives) {
    const name = printable(input);
    const before = found.files.length + found.unreadable.length;
    const linksBefore = found.linksNotFollowed.length;
    const kind = await classify(input, options.cwd);
    if (kind === 'file') {
      if (!excluded(name)) add(input, true);
      else continue;
    } else if (kind === 'directory') {
      // join(input, rel) for each entry, without normalising the same folder 20,000 times.
      const folder = normalize(name);
      const prefix = folder === '.' || folder === `.${sep}` ? '' : folder.endsWith(sep) ? folder : folder + sep;
      const root = typeof input === 'string' ? resolve(options.cwd, input) : resolveBytes(options.cwd, input);
      const walk = walkDirectory(root, exclusions, options.followLinks === true);
      for (const entry of walk.files) {
        if (prefix !== '') {
          // A folder named by its absolute path: the name is the path, one string rather than two.
          const file = prefix + entry.rel;
          entry.file = file === entry.path ? entry.path : file;
        }
        if (!excluded(entry.file)) push(entry);
      }
      for (const u of walk.unreadable) {
        const file = prefix + u.rel;
        found.unreadable.push({ file: file === '' ? name : file, reason: `cannot read ${file || name}: ${u.reason}` });
      }
      for (const l of walk.links)
        if (!excluded(prefix + l.rel)) found.linksNotFollowed.push(notFollowed(prefix + l.rel, l.target, name));
      // Links left out do not make a folder less empty: the line that counts them comes first.
      if (found.files.length + found.unreadable.length === before) emptyFolders.push(name);
      continue;
    } else if (kind === 'pattern' && typeof input === 'string') {
      // The glob engine loads only for a pattern: a list of files or folders does without it.
      const { default: fg } = await import('fast-glob');
      const matches = await fg(input, {
        cwd: options.cwd,
        onlyFiles: true,
        dot: false,
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
      }
      if (found.files.length + found.unreadable.length === before && found.linksNotFollowed.length === linksBefore)
        patternMissed = true;
    } else {
      missing.push(name);
      continue;
    }
    if (found.files.length + found.unreadable.length === before) found.unmatched.push(name);
  }

  if (found.files.length === 0 && found.unreadable.length === 0) {
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
      return found;
    }
    const named = positives.length === 0 ? '(none given)' : positives.map((p) => `"${printable(p)}"`).join(', ');
    const hint = exclusions.length > 0 ? ` after excluding ${exclusions.map((p) => `"${p}"`).join(', ')}` : '';
    throw new ExtractError(
      'no_input',
      `no input file matched ${named}${hint}: check the paths, or quote glob patterns so the shell does not expand them`,
    );
  }
  for (const m of missing) found.unreadable.push({ file: m, reason: `${m}: no such file or directory` });
  return found;
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

/** A file found in a folder: an InputFile whose `file` the caller sets from `rel`. */
type Walked = InputFile & { rel: string; stamp: FileStamp };
/** What a walk found: files, what it could not read (why), links it did not follow (where to). */
type Walk = {
  files: Walked[];
  unreadable: Array<{ rel: string; reason: string }>;
  links: Array<{ rel: string; target: FsPath }>;
};

/**
 * The files under a folder, sorted by their path in it: an entry that is not a symbolic link
 * has its folder's real path and its name as real path, so it costs one lstat (which the stat
 * cache needs anyway) and no realpath. Symbolic links are followed (each folder once) while
 * they stay under the folder, anywhere with `followLinks`; hidden names are skipped, as are
 * folders and files an exclusion matches. What cannot be read (a folder, a broken link) is
 * reported, never skipped in silence. A folder listing holding a name that is not UTF-8 is
 * read again as bytes (paths.ts): the common listing stays one call of strings.
 */
function walkDirectory(root: FsPath, exclusions: string[], followLinks: boolean): Walk {
  const out: Walk = { files: [], unreadable: [], links: [] };
  const ignored = (rel: string): boolean => exclusions.some((pattern) => matchesGlob(rel, pattern));
  let realRoot: FsPath;
  try {
    realRoot = realPathOf(root);
  } catch (err) {
    out.unreadable.push({ rel: '', reason: describeFsError(err) });
    return out;
  }
  const visited = new Set<string>([pathKey(realRoot)]);
  const visit = (dir: FsPath, realDir: FsPath, rel: string): void => {
    // Names, not Dirents: each entry is stat'ed anyway (the stat cache needs its stamp), and
    // 20,000 Dirent objects would only add to what the garbage collector has to move.
    let names: FsPath[];
    try {
      names = listNames(dir);
    } catch (err) {
      out.unreadable.push({ rel, reason: describeFsError(err) });
      return;
    }
    // REFERENCE CHANGE (the only one): the entries are stat'ed first, then visited in the
    // order of the batch (a folder at its name + "/"), not in the listing's order. Today's walk
    // lets the listing's order (the file system's) choose which of two ways to one folder (a
    // link inside the tree and the folder itself) is walked; the streaming walk takes the first
    // in the batch's order, and so does this reference. Everything else is today's code.
    const entries: Array<{ key: string; path: FsPath; realPath: FsPath; relPath: string; info: Stats }> = [];
    for (const entry of names) {
      const name = typeof entry === 'string' ? entry : printable(entry);
      if (name.startsWith('.')) continue;
      const relPath = rel === '' ? name : `${rel}/${name}`;
      if (exclusions.length > 0 && ignored(relPath)) continue;
      const path = childPath(dir, entry);
      let realPath = realDir === dir ? path : childPath(realDir, entry);
      let info = lstatSync(path, MAY_BE_GONE);
      if (info?.isSymbolicLink()) {
        try {
          realPath = realPathOf(path);
        } catch (err) {
          out.unreadable.push({ rel: relPath, reason: brokenLink(path, err) });
          continue;
        }
        if (!followLinks && !isInside(realPath, realRoot)) {
          out.links.push({ rel: relPath, target: realPath });
          continue;
        }
        info = statSync(realPath, MAY_BE_GONE);
      }
      if (info === undefined) continue;
      entries.push({ key: info.isDirectory() ? `${name}/` : name, path, realPath, relPath, info });
    }
    entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const { path, realPath, relPath, info } of entries) {
      if (info.isDirectory()) {
        const key = pathKey(realPath);
        if (visited.has(key)) continue;
        visited.add(key);
        visit(path, realPath, relPath);
        continue;
      }
      if (!info.isFile()) continue;
      out.files.push({
        rel: relPath,
        file: relPath,
        path,
        realPath: pathKey(realPath),
        size: info.size,
        explicit: false,
        stamp: stampOf(info),
      });
    }
  };
  visit(root, realRoot, '');
  out.files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  out.links.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return out;
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

function stampOf(info: Stats): FileStamp {
  return `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}:${info.dev}`;
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

function describeFsError(err: unknown): string {
  const code = errnoCode(err);
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOENT') return 'no such file';
  return code ?? (err instanceof Error ? err.message : String(err));
}
