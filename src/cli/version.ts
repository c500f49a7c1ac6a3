import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';

/** The package's version, read from package.json. */
export const VERSION: string = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')).version;

/** What --version prints (bin/extract.js prints the same without loading this bundle). */
export const VERSION_LINE = `extract ${VERSION} (node ${process.version}, ${process.platform} ${process.arch})`;
