import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, matchesGlob, relative, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import fg from 'fast-glob';
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
};
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
    exclusions.some((pattern) => matchesExclusion(file, pattern, options.cwd));

  const add = async (file: string, explicit = false): Promise<void> => {
    const path = resolve(options.cwd, file);
    let realPath: string;
    let size: number;
    try {
      realPath = await realpath(path);
      const info = await stat(realPath);
      if (!info.isFile()) return;
      size = info.size;
      await access(realPath, constants.R_OK);
    } catch (err) {
      found.unreadable.push({ file, reason: `cannot read ${file}: ${describeFsError(err)}` });
      return;
    }
    if (seen.has(realPath)) return;
    seen.add(realPath);
    found.files.push({ file, path, realPath, size, explicit });
  };

  // A named file that does not exist fails that input; if nothing at all matched, the run is a usage error.
  const missing: string[] = [];
  for (const input of positives) {
    const before = found.files.length + found.unreadable.length;
    const kind = await classify(input, options.cwd);
    if (kind === 'file') {
      if (!excluded(input)) await add(input, true);
      else continue;
    } else if (kind === 'directory') {
      const matches = await fg('**/*', {
        cwd: resolve(options.cwd, input),
        onlyFiles: true,
        dot: false,
        ignore: exclusions,
        suppressErrors: true,
        followSymbolicLinks: true,
      });
      for (const m of matches.sort()) {
        const file = join(input, m);
        if (!excluded(file)) await add(file);
      }
    } else if (kind === 'pattern') {
      const matches = await fg(input, {
        cwd: options.cwd,
        onlyFiles: true,
        dot: false,
        ignore: exclusions,
        suppressErrors: true,
        followSymbolicLinks: true,
      });
      for (const m of matches.sort()) await add(m);
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
    const info = await stat(resolve(cwd, input));
    return info.isDirectory() ? 'directory' : 'file';
  } catch (err) {
    // A name that exists wins over its reading as a pattern ("report[1].pdf" is a file).
    if (fg.isDynamicPattern(input)) return 'pattern';
    return errnoCode(err) === 'ENOENT' ? 'missing' : 'file';
  }
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

function describeFsError(err: unknown): string {
  const code = errnoCode(err);
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOENT') return 'no such file';
  return code ?? (err instanceof Error ? err.message : String(err));
}
