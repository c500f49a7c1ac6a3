/**
 * `npm run depcheck`'s second half needs what Node loads, not what TypeScript sees: each file of
 * src/ transpiled alone by esbuild (as the build does) into .tmp/depcheck/src/, names and import
 * paths kept. `import type` and `type` specifiers are erased there, so a type taken from a module
 * that imports zod does not count as loading zod. dependency-cruiser's TypeScript 7 support (its
 * swc parser) keeps them as ordinary imports, which is right for cycles but wrong for the start-up.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { transformSync } from 'esbuild';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, '.tmp/depcheck');

rmSync(OUT, { recursive: true, force: true });
for (const entry of readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
  const source = join(entry.parentPath, entry.name);
  // verbatimModuleSyntax, as tsconfig.json says: an import kept for its side effects stays.
  const { code } = transformSync(readFileSync(source, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  });
  // Kept as .ts, so the imports' `./x.ts` resolve; the swc parser reads the plain JavaScript.
  const target = join(OUT, source.slice(ROOT.length + 1));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, code);
}
