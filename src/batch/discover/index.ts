/** The discover phase's door: what the run and `extract watch` take from it; the rest is its own. */
export { findInputs, folderExclusions, logFound, type FoundInputs } from './find.ts';
export { streamInputs } from './stream.ts';
