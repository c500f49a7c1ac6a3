import { accessSync, constants, lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { isAbsolute, matchesGlob, normalize, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { errnoCode } from '../errno.ts';
import { ExtractError } from '../errors.ts';

/** A file to extract: `file` is the path as the user gave it (records and outputs use it). */
export type InputFile = {
  file: string;
  path: string;
  realPath: string;
  size: number;
  /** Named by itself (or listed on stdin), not found in a directory or by a pattern: always sent. */
  explicit: boolean;
  /** What the stat cache compares (see state/stat-cache.ts); absent when the file was not stat'ed as such. */
  stamp?: FileStamp | undefined;
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
/** `unmatched`: inputs that matched nothing while others did (worth a warning, not a failure). */
export type Discovery = { files: InputFile[]; unreadable: UnreadableInput[]; unmatched: string[] };

export type DiscoverOptions = { cwd: string; ignore: string[]; stdin?: Readable | undefined };

/**
 * Turns the command line's inputs into files, in a stable order: inputs in the order given,
 * the matches of one pattern or directory sorted. Files are deduplicated by real path
 * (a symlink and its target, "./a.pdf" and "a.pdf" are one document).
 *
 * An input is a file, a directory (recursed), a fast-glob pattern, "!pattern" (an
 * exclusion, as in .gitignore), or "-" (newline-separated paths on standard input).
 */
export async function discoverInputs(inputs: string[], options: DiscoverOptions): Promise<Discovery> {
  const exclusions = [
    ...options.ignore,
    ...inputs.filter((i) => i.startsWith('!') && i.length > 1).map((i) => i.slice(1)),
  ];
  const positives: string[] = [];
  for (const input of inputs) {
    if (input === '-') positives.push(...(await readPathList(options.stdin)));
    else if (!(input.startsWith('!') && input.length > 1)) positives.push(input);
  }

  const found: Discovery = { files: [], unreadable: [], unmatched: [] };
  const seen = new Set<string>();
  const excluded = (file: string): boolean =>
    exclusions.length > 0 && exclusions.some((pattern) => matchesExclusion(file, pattern, options.cwd));

  // Synchronous on purpose: a run over thousands of files is bound by these syscalls, and the
  // thread pool's round trips cost more than the calls themselves.
  const add = (file: string, explicit = false): void => {
    const path = resolve(options.cwd, file);
    let realPath: string;
    let info: Stats;
    try {
      realPath = realpathSync(path);
      info = statSync(realPath);
      if (!info.isFile()) return;
      accessSync(realPath, constants.R_OK);
    } catch (err) {
      found.unreadable.push({ file, reason: `cannot read ${file}: ${describeFsError(err)}` });
      return;
    }
    push({ file, path, realPath, size: info.size, explicit, stamp: stampOf(info) });
  };
  const push = (input: InputFile): void => {
    if (seen.has(input.realPath)) return;
    seen.add(input.realPath);
    found.files.push(input);
  };

  // A named file that does not exist fails that input; if nothing at all matched, the run is a usage error.
  const missing: string[] = [];
  for (const input of positives) {
    const before = found.files.length + found.unreadable.length;
    const kind = await classify(input, options.cwd);
    if (kind === 'file') {
      if (!excluded(input)) add(input, true);
      else continue;
    } else if (kind === 'directory') {
      // join(input, rel) for each entry, without normalising the same folder 20,000 times.
      const folder = normalize(input);
      const prefix = folder === '.' || folder === `.${sep}` ? '' : folder.endsWith(sep) ? folder : folder + sep;
      for (const entry of walkDirectory(resolve(options.cwd, input), exclusions)) {
        if (prefix !== '') entry.file = prefix + entry.rel;
        if (!excluded(entry.file)) push(entry);
      }
    } else if (kind === 'pattern') {
      // The glob engine loads only for a pattern: a list of files or folders does without it.
      const { default: fg } = await import('fast-glob');
      const matches = await fg(input, {
        cwd: options.cwd,
        onlyFiles: true,
        dot: false,
        ignore: exclusions,
        suppressErrors: true,
        followSymbolicLinks: true,
      });
      for (const m of matches.sort()) add(m);
    } else {
      missing.push(input);
      continue;
    }
    if (found.files.length + found.unreadable.length === before) found.unmatched.push(input);
  }

  if (found.files.length === 0 && found.unreadable.length === 0) {
    const named = positives.length === 0 ? '(none given)' : positives.map((p) => `"${p}"`).join(', ');
    const hint = exclusions.length > 0 ? ` after excluding ${exclusions.map((p) => `"${p}"`).join(', ')}` : '';
    throw new ExtractError(
      'no_input',
      `no input file matched ${named}${hint}: check the paths, or quote glob patterns so the shell does not expand them`,
    );
  }
  for (const m of missing) found.unreadable.push({ file: m, reason: `${m}: no such file or directory` });
  return found;
}

async function classify(input: string, cwd: string): Promise<'file' | 'directory' | 'pattern' | 'missing'> {
  try {
    const info = statSync(resolve(cwd, input));
    return info.isDirectory() ? 'directory' : 'file';
  } catch (err) {
    // A name that exists wins over its reading as a pattern ("report[1].pdf" is a file).
    if (/[*?[\]{}()!@+]/.test(input) && (await import('fast-glob')).default.isDynamicPattern(input)) return 'pattern';
    return errnoCode(err) === 'ENOENT' ? 'missing' : 'file';
  }
}

/** A file found in a folder: an InputFile whose `file` the caller sets from `rel`. */
type Walked = InputFile & { rel: string; stamp: FileStamp };

/**
 * The files under a folder, sorted by their path in it: an entry that is not a symbolic link
 * has its folder's real path and its name as real path, so it costs one lstat (which the stat
 * cache needs anyway) and no realpath. Symbolic links are followed (each
 * folder once); hidden names are skipped, as are folders and files an exclusion matches.
 * Folders that cannot be read are skipped, as fast-glob's suppressErrors did.
 */
function walkDirectory(root: string, exclusions: string[]): Walked[] {
  const out: Walked[] = [];
  const ignored = (rel: string): boolean => exclusions.some((pattern) => matchesGlob(rel, pattern));
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return out;
  }
  const visited = new Set<string>([realRoot]);
  const visit = (dir: string, realDir: string, rel: string): void => {
    // Names, not Dirents: each entry is stat'ed anyway (the stat cache needs its stamp), and
    // 20,000 Dirent objects would only add to what the garbage collector has to move.
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const relPath = rel === '' ? name : `${rel}/${name}`;
      if (exclusions.length > 0 && ignored(relPath)) continue;
      // The folders are absolute and normalised, the name has no slash: join() would only cost.
      const path = childPath(dir, name);
      // Outside a symbolic link the two are the same string: one of them, not two copies.
      let realPath = realDir === dir ? path : childPath(realDir, name);
      let info = lstatSync(path, MAY_BE_GONE);
      if (info?.isSymbolicLink()) {
        try {
          realPath = realpathSync(path);
          info = statSync(realPath);
        } catch {
          continue;
        }
      }
      if (info === undefined) continue;
      if (info.isDirectory()) {
        if (visited.has(realPath)) continue;
        visited.add(realPath);
        visit(path, realPath, relPath);
        continue;
      }
      if (!info.isFile()) continue;
      out.push({ rel: relPath, file: relPath, path, realPath, size: info.size, explicit: false, stamp: stampOf(info) });
    }
  };
  visit(root, realRoot, '');
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** A file removed between the listing and its lstat is not there: skipped, as if listed a moment later. */
const MAY_BE_GONE = { throwIfNoEntry: false } as const;

/** One flat string (join, not a rope): the real path is a key of several maps and sets. */
function childPath(dir: string, name: string): string {
  return dir.endsWith('/') ? [dir, name].join('') : [dir, name].join('/');
}

function stampOf(info: Stats): FileStamp {
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

async function readPathList(stdin: Readable | undefined): Promise<string[]> {
  if (!stdin) return [];
  let text = '';
  for await (const chunk of stdin)
    text += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

export function describeFsError(err: unknown): string {
  const code = errnoCode(err);
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOENT') return 'no such file';
  return code ?? (err instanceof Error ? err.message : String(err));
}
