import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, parse, relative, resolve, sep } from 'node:path';

/**
 * The layout of a directory output: one `<name>.json` per document, mirroring the inputs'
 * folder tree below their common base, so every result maps back to its input. A name keeps
 * its input's extension (`scan.pdf` -> `scan.pdf.json`): it must not depend on which other files
 * arrive the same night, and `scan.png` beside it would otherwise take `scan.json` from it.
 */

/** The deepest directory that contains every one of `files` (resolved against `cwd`). */
export function commonBase(files: readonly string[], cwd: string): string {
  const dirs = files.map((f) => dirname(resolve(cwd, f)));
  const first = dirs[0];
  if (first === undefined) return resolve(cwd);
  let common = first.split(sep);
  for (const dir of dirs.slice(1)) {
    const parts = dir.split(sep);
    let n = 0;
    while (n < common.length && n < parts.length && common[n] === parts[n]) n++;
    common = common.slice(0, n);
  }
  // Only the root left in common (or none, for C:\ and D:\): the first input's root.
  return common.length <= 1 ? parse(first).root : common.join(sep);
}

/** `a/b/invoice.pdf` -> `a/b/invoice.pdf.json`. */
export const jsonNameOf = (relPath: string): string => `${relPath}.json`;

/**
 * The name an earlier version gave (`a/b/invoice.json`: the extension replaced), kept when a
 * folder it wrote still holds this input's record there, so an upgrade leaves no second copy.
 */
function legacyNameOf(relPath: string): string | undefined {
  const ext = extname(relPath);
  return ext === '' ? undefined : `${relPath.slice(0, -ext.length)}.json`;
}

/**
 * Where the record of `file` goes, given its path below the output folder: `<rel>.json`, or the
 * earlier version's name when that file exists and holds this same input's record (and the new
 * name does not exist yet).
 */
export function keptPath(outDir: string, rel: string, file: string): string {
  const path = join(outDir, jsonNameOf(rel));
  const legacy = legacyNameOf(rel);
  if (legacy === undefined || existsSync(path)) return path;
  try {
    const held: unknown = JSON.parse(readFileSync(join(outDir, legacy), 'utf8'));
    if (typeof held === 'object' && held !== null && 'file' in held && held.file === file) return join(outDir, legacy);
  } catch {
    // No such file, or not a record: the new name.
  }
  return path;
}

/**
 * Output paths (absolute, below `outDir`) for each file, in the order given. Mirroring the
 * tree rules out collisions between folders, keeping the extension collisions between
 * `scan.pdf` and `scan.png`; a path listed twice gets `.2.json`, `.3.json`.
 */
export function mirroredPaths(files: readonly string[], cwd: string, outDir: string): string[] {
  const base = commonBase(files, cwd);
  const taken = new Set<string>();
  const out: string[] = [];
  for (const file of files) {
    const rel = relative(base, resolve(cwd, file));
    let path = keptPath(outDir, rel, file);
    for (let n = 2; taken.has(path); n++) path = join(outDir, `${rel}.${n}.json`);
    taken.add(path);
    out.push(path);
  }
  return out;
}
