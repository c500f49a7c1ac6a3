/** The writers of a run's records (README: "Outputs"). */
// The record's schema is imported from record-schema.ts by what validates records: a re-export
// here would make every importer of this barrel load zod (esbuild's chunks follow it).
export {
  type DocumentRecord,
  completedRecord,
  errorRecord,
} from './record.ts';
export {
  type OutputTarget,
  checkExplode,
  checkSharedStdout,
  isStreamed,
  prepareOutput,
  resolveOutput,
} from './target.ts';
export {
  type DestinationOptions,
  writeDestination,
  writeOutputs,
} from './write.ts';
export { destinationOf } from './destination.ts';
export { type StreamWriter, createStreamWriter } from './stream.ts';
export { listTablePaths } from './flatten.ts';
export { commonBase } from './mirror.ts';
export { writeFileAtomic } from './atomic.ts';
