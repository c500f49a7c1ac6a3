import type { StreamWriter } from '../outputs/index.ts';
import { DEFAULT_MISSING_MARKER, type MissingMarker, recordWithoutMarker } from '../outputs/missing-marker.ts';
import { storedResults, storedText } from '../outputs/stored-results.ts';
import type { FileStamp } from './discover.ts';
import type { ReportEntry } from './summary.ts';
import { LineSpool, READ_AFTER_CLOSE, WRITTEN_AFTER_CLOSE } from './spool.ts';

/**
 * Which input a record is of: a document's place in the batch (Job.ordinal), or for an input
 * that could not be read, unreadableKey(its name).
 */
export type RecordKey = number | string;

/**
 * The run's records, one per input, filled as documents end (in any order) and read back in
 * input order for the outputs and the report. With a streamed output (-o - as JSON Lines) each
 * record is also written the moment it is known.
 *
 * A record is not held in memory once emitted: it goes to a spool file (RecordSpool) and is read
 * back, one at a time, each time the finish step walks the batch (outputs, summary, report), so
 * a run over 100,000 documents holds an offset per document, not its record.
 * Where no spool can be made (no writable temp directory), records are kept in memory as before.
 */
export type Records = {
  /** `read`: the stat of the file as this record's content was read (what a move compares), when known. */
  emit(key: RecordKey, entry: ReportEntry, read?: FileStamp): void;
  /** Replaces an emitted record without emitting it again (the finish step's --move-done notes). */
  update(key: RecordKey, entry: ReportEntry): void;
  /** The record of one input, if emitted. */
  get(key: RecordKey): ReportEntry | undefined;
  /** The records of `keys` that were emitted, in that order: read again at each iteration. */
  inOrder(keys: Iterable<RecordKey>): Iterable<ReportEntry>;
  /** Frees the spool (its file descriptor) at once: no record can be read after. */
  close(): void;
};

/**
 * Every record of a run passes through `emit`, whichever step made it (this run's answer, the
 * journal's, a copy's): there the service's missing marker becomes null, once, so the stream,
 * the spool and all that reads it back (outputs, summary, report, --review, GitHub) agree.
 */
export function createRecords(
  stream: StreamWriter | undefined,
  onRecord?: ((entry: ReportEntry, read?: FileStamp) => void) | undefined,
  store: RecordStore = RecordSpool.open() ?? new MemoryRecords(),
  marker: MissingMarker = DEFAULT_MISSING_MARKER,
): Records {
  return {
    emit(key, given, read) {
      const entry = recordWithoutMarker(given, marker);
      if (stream) void stream.write(entry);
      onRecord?.(entry, read);
      store.put(key, entry);
    },
    update: (key, entry) => store.put(key, entry),
    get: (key) => store.get(key),
    close: () => store.close?.(),
    inOrder: (keys) => ({
      *[Symbol.iterator]() {
        for (const key of keys) {
          const entry = store.get(key);
          if (entry !== undefined) yield entry;
        }
      },
    }),
  };
}

/** Where a run's records are kept between their emission and the finish step. */
export type RecordStore = {
  put(key: RecordKey, entry: ReportEntry): void;
  get(key: RecordKey): ReportEntry | undefined;
  close?(): void;
};

/** Every record as its object: the store of a run that cannot spool, and the reference the spool is tested against. */
export class MemoryRecords implements RecordStore {
  readonly #entries = new Map<RecordKey, ReportEntry>();
  #closed = false;

  put(key: RecordKey, entry: ReportEntry): void {
    if (this.#closed) throw new Error(WRITTEN_AFTER_CLOSE);
    this.#entries.set(key, entry);
  }

  get(key: RecordKey): ReportEntry | undefined {
    if (this.#closed) throw new Error(READ_AFTER_CLOSE);
    return this.#entries.get(key);
  }

  /** As the spool's: no record is read after, so a caller that would read one fails here too. */
  close(): void {
    this.#closed = true;
    this.#entries.clear();
  }
}

/**
 * Records on disk (a LineSpool): each one a line, appended as it is emitted, found again by its
 * key's slot. A line is the record as JSON with its results set to null, a tab, then the results'
 * JSON text (JSON escapes tabs and newlines inside strings, so neither appears raw in either
 * part); results come back as stored results (outputs/stored-results.ts), which every writer
 * reads like the original.
 */
export class RecordSpool implements RecordStore {
  /** A document's record at its ordinal's slot: two numbers a document, no map entry. */
  readonly #lines: LineSpool;
  /** The few records keyed by name (inputs that could not be read), as their lines. */
  readonly #named = new Map<string, string>();

  private constructor(lines: LineSpool) {
    this.#lines = lines;
  }

  /** A spool in the temp directory, or undefined when none can be made there. */
  static open(dir?: string): RecordSpool | undefined {
    const lines = LineSpool.open(dir);
    return lines === undefined ? undefined : new RecordSpool(lines);
  }

  put(key: RecordKey, entry: ReportEntry): void {
    this.#lines.assertOpen(WRITTEN_AFTER_CLOSE);
    if (typeof key === 'number') this.#lines.put(key, spoolLine(entry));
    else this.#named.set(key, spoolLine(entry));
  }

  get(key: RecordKey): ReportEntry | undefined {
    this.#lines.assertOpen(READ_AFTER_CLOSE);
    const line = typeof key === 'number' ? this.#lines.get(key) : this.#named.get(key);
    return line === undefined ? undefined : parseSpoolLine(line);
  }

  close(): void {
    this.#named.clear();
    this.#lines.close();
  }
}

/** A record as one spool line (without its newline): see RecordSpool. */
function spoolLine(entry: ReportEntry): string {
  const results = entry.results;
  const stored = typeof results === 'object' && results !== null;
  const head = stored ? { ...entry, results: null } : entry;
  // A field present but undefined (a dry run's pages_estimate) stays present when read back.
  const keep = (key: string, value: unknown): unknown => (value === undefined && key !== '' ? UNDEFINED : value);
  const text = JSON.stringify(head, keep);
  return `${text}\t${stored ? (storedText(results) ?? JSON.stringify(results)) : ''}`;
}

function parseSpoolLine(line: string): ReportEntry {
  const tab = line.indexOf('\t');
  const head = line.slice(0, tab);
  const entry = JSON.parse(head) as ReportEntry;
  if (head.includes(UNDEFINED_JSON))
    for (const [key, value] of Object.entries(entry)) if (value === UNDEFINED) Reflect.set(entry, key, undefined);
  const results = line.slice(tab + 1);
  if (results !== '') entry.results = storedResults(results);
  return entry;
}

/** What an undefined field is written as: a string no record field holds. */
const UNDEFINED = '\u0000undefined';
const UNDEFINED_JSON = JSON.stringify(UNDEFINED).slice(1, -1);

/** The record key of an input that could not be read (it has no real path or content). */
export function unreadableKey(file: string): string {
  return `unreadable:${file}`;
}
