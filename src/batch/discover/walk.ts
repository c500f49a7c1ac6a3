/**
 * A folder walked in the order of its whole paths, a chunk at a time (FolderWalk), and the
 * record of what every walk and input has found so far (Seen).
 */
import { lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { errnoCode, describeFsError } from '../../errno.ts';
import { stampOf, type DiscoveryStream, type InputFile, type LinkNotFollowed } from '../discover.ts';
import { BYTES, realPathOf } from './names.ts';
import { childPath, fromBytes, isInside, pathKey, printable, type FsPath } from '../paths.ts';

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
export class Seen {
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

export function notFollowed(file: string, target: FsPath, folder: string): LinkNotFollowed {
  const shown = printable(target);
  return {
    file,
    target: shown,
    folder,
    reason: `a symbolic link that leads outside ${folder} (to ${shown}): --follow-links follows it, or name it by itself`,
  };
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
export class FolderWalk {
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
