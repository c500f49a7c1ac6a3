/** The finish phase's door: the run's end, and the moves `extract watch` makes per document. */
export { finishBatch, finishDryRun } from './finish.ts';
export { checkMoveFolders, folderFor, moveInto } from './move.ts';
