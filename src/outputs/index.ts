/** The writers of a run's records (README: "Outputs"). */
// The record's schema is imported from record-schema.ts by what validates records: a re-export
// here would make every importer of this barrel load zod (esbuild's chunks follow it).
export {
  type DocumentRecord,
  type OutputFormat,
  type RecordOrigin,
  completedRecord,
  errorRecord,
  notSubmittedRecord,
  pendingRecord,
  recordFields,
} from './record.ts';
export {
  type FileFormat,
  type OutputTarget,
  checkExplode,
  checkSharedStdout,
  isStreamed,
  prepareOutput,
  resolveOutput,
} from './target.ts';
export {
  type DestinationOptions,
  type WriteOutputsOptions,
  type WriteOutputsResult,
  writeDestination,
  writeOutputs,
} from './write.ts';
export { type Destination, destinationOf } from './destination.ts';
export { type StreamWriter, createStreamWriter } from './stream.ts';
export { encodeCell, neutraliseFormula, parseExplode } from './csv.ts';
export { DOCUMENT_COLUMNS, listTablePaths } from './flatten.ts';
export { commonBase, mirroredPaths } from './mirror.ts';
export { writeFileAtomic } from './atomic.ts';
