import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's top folder (package.json, app/, dist/), found from this module's own place: it
 * is src/ under vitest, and a file of the bundle in dist/ (an entry or a shared chunk) after a
 * build, so no fixed number of "../" fits both.
 */
export const PACKAGE_ROOT: string = _findRoot(dirname(fileURLToPath(import.meta.url)));

/** Whether this code runs from the bundle that `npm run build` makes, not from the TypeScript sources. */
export const BUNDLED: boolean = import.meta.url.endsWith('.js');

function _findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${start}`);
    dir = up;
  }
  return dir;
}
