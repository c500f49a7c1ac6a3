/** The command line's inputs (files, folders, patterns, exclusions, stdin's list) turned into files, a chunk at a time. */
import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { basename, isAbsolute, matchesGlob, normalize, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { errnoCode, describeFsError } from '../../errno.ts';
import { ExtractError } from '../../errors.ts';
import {
  stampOf,
  type DiscoverOptions,
  type Discovery,
  type DiscoveryStream,
  type InputFile,
  type StreamOptions,
} from '../discover.ts';
import { bytesFs, namesBehind, realFolder, realPathOf, resolveBytes } from './names.ts';
import { FolderWalk, notFollowed, Seen } from './walk.ts';
import { fromBytes, isInside, pathKey, printable, type FsPath } from '../paths.ts';
import { isUrl, readAhead, shownUrl } from '../../inputs/remote.ts';

/**
 * Turns the command line's inputs into files, in a stable order: inputs in the order given,
 * the matches of one pattern or directory sorted. Files are deduplicated by real path
 * (a symlink and its target, "./a.pdf" and "a.pdf" are one document).
 *
 * An input is a file, a directory (recursed), a fast-glob pattern, "!pattern" (an
 * exclusion, as in .gitignore), an http(s) URL (read by options.remote), or "-"
 * (newline-separated paths or URLs on standard input).
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
  const urls = new Set<string>();
  // URLs are read a few at a time ahead of the loop, which takes them in the order given.
  const remote = options.remote;
  const readUrl =
    remote === undefined
      ? undefined
      : readAhead(positives.filter(isUrl), remote, Math.max(1, options.remoteParallel ?? 1));
  for (const input of positives) {
    if (isUrl(input)) {
      if (urls.has(input)) continue;
      urls.add(input);
      const got = readUrl === undefined ? undefined : await readUrl(input);
      if (got === undefined) missing.push(`${shownUrl(input)} (a URL: only the batch command reads URLs)`);
      else if ('reason' in got) found.unreadable.push(got);
      else chunk.push(got);
      if (chunk.length >= size) yield take();
      continue;
    }
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
