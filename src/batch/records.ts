import type { StreamWriter } from '../outputs/index.ts';
import type { ReportEntry } from './summary.ts';

/**
 * The run's records, one per input, filled as documents end (in any order) and read back in
 * input order for the outputs and the report. With a streamed output (-o - as JSON Lines) each
 * record is also written the moment it is known.
 */
export type Records = {
  emit(key: string, entry: ReportEntry): void;
  /** The record of one input, if emitted. */
  get(key: string): ReportEntry | undefined;
  /** The records of `keys` that were emitted, in that order. */
  inOrder(keys: readonly string[]): ReportEntry[];
};

export function createRecords(
  stream: StreamWriter | undefined,
  onRecord?: ((entry: ReportEntry) => void) | undefined,
): Records {
  const entries = new Map<string, ReportEntry>();
  return {
    emit(key, entry) {
      entries.set(key, entry);
      if (stream) void stream.write(entry);
      onRecord?.(entry);
    },
    get: (key) => entries.get(key),
    inOrder: (keys) => keys.map((k) => entries.get(k)).filter((e): e is ReportEntry => e !== undefined),
  };
}

/** The record key of an input that could not be read (it has no real path or content). */
export function unreadableKey(file: string): string {
  return `unreadable:${file}`;
}
