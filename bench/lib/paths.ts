import { fileURLToPath } from 'node:url';

/** The repository root, the Node that runs the bench (the project's Node 24), and the built CLI. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NODE = process.execPath;
export const CLI = `${ROOT}bin/extract.js`;
/** The real corpus beside the project (../shared/corpus/factur-x), as fixtures/lib/corpus.ts finds it; it may be absent. */
export const CORPUS_DIR = fileURLToPath(new URL('../../../shared/corpus/factur-x', import.meta.url));
