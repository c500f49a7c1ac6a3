import { dirname, extname, join, parse, relative, resolve, sep } from 'node:path';

/**
 * The layout of a directory output: one `<name>.json` per document, mirroring the inputs'
 * folder tree below their common base, so every result maps back to its input.
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

/** `a/b/invoice.pdf` -> `a/b/invoice.json`; a name without extension just gains `.json`. */
export function withJsonExtension(relPath: string): string {
  const ext = extname(relPath);
  return `${ext === '' ? relPath : relPath.slice(0, -ext.length)}.json`;
}

/**
 * Output paths (absolute, below `outDir`) for each file, in the order given. Mirroring the
 * tree rules out collisions between folders; two inputs that differ only by extension
 * (`scan.pdf`, `scan.png`) both keep their extension (`scan.pdf.json`, `scan.png.json`) so
 * neither name depends on which came first; a path listed twice gets `.2.json`, `.3.json`.
 */
export function mirroredPaths(files: readonly string[], cwd: string, outDir: string): string[] {
  const base = commonBase(files, cwd);
  const rels = files.map((f) => relative(base, resolve(cwd, f)));
  const wanted = rels.map(withJsonExtension);
  const counts = new Map<string, number>();
  for (const w of wanted) counts.set(w, (counts.get(w) ?? 0) + 1);
  const taken = new Set<string>();
  return rels.map((rel, i) => {
    const first = wanted[i] ?? withJsonExtension(rel);
    let name = (counts.get(first) ?? 0) > 1 ? `${rel}.json` : first;
    for (let n = 2; taken.has(name); n++) name = `${rel}.${n}.json`;
    taken.add(name);
    return join(outDir, name);
  });
}
