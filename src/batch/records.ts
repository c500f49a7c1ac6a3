import type { StreamWriter } from '../outputs/index.ts';
import { JSON_LINES, type WithJsonLines } from '../outputs/json.ts';
import { DEFAULT_MISSING_MARKER, type MissingMarker, recordWithoutMarker } from '../outputs/missing-marker.ts';
import { recordFields } from '../outputs/record.ts';
import { storedResults, storedText } from '../outputs/stored-results.ts';
import type { FileStamp } from './discover.ts';
import { OUTCOME_MARKS, outcomeMark, type Marked, type OutcomeMark } from './outcome-marks.ts';
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
  /**
   * The records of `keys` that were emitted, in that order: read again at each iteration. The
   * summary counts them by their marks, and the JSON Lines writer copies their lines, without
   * reading them.
   */
  inOrder(keys: Iterable<RecordKey>): Iterable<ReportEntry> & Marked & WithJsonLines;
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
  const marks = new OutcomeMarks();
  const put = (key: RecordKey, entry: ReportEntry): void => {
    store.put(key, entry);
    marks.set(key, entry);
  };
  return {
    emit(key, given, read) {
      const entry = recordWithoutMarker(given, marker);
      if (stream) void stream.write(entry);
      onRecord?.(entry, read);
      put(key, entry);
    },
    update: put,
    get: (key) => store.get(key),
    close: () => store.close?.(),
    inOrder: (keys) => ({
      *[Symbol.iterator]() {
        for (const key of keys) {
          const entry = store.get(key);
          if (entry !== undefined) yield entry;
        }
      },
      [OUTCOME_MARKS]: () => marks.of(keys),
      [JSON_LINES]: () => {
        const line = store.jsonLine?.bind(store);
        if (line === undefined) return undefined;
        return (function* () {
          for (const key of keys) {
            const text = line(key);
            if (text !== undefined) yield text;
          }
        })();
      },
    }),
  };
}

/**
 * Each record's outcome mark (outcome-marks.ts), by key: a byte at a document's ordinal, a map
 * entry for the few named records. A dry run's records are counted by reading them (their page
 * estimates): it has no marks.
 */
class OutcomeMarks {
  /** A mark + 1 at each ordinal's slot; 0: no record. */
  #slots = new Uint8Array(1024);
  readonly #named = new Map<string, OutcomeMark>();
  #planned = false;

  set(key: RecordKey, entry: ReportEntry): void {
    if (entry.outcome === 'planned') this.#planned = true;
    const mark = outcomeMark(entry);
    if (typeof key === 'string') {
      this.#named.set(key, mark);
      return;
    }
    while (key >= this.#slots.length) {
      const grown = new Uint8Array(this.#slots.length * 2);
      grown.set(this.#slots);
      this.#slots = grown;
    }
    this.#slots[key] = mark + 1;
  }

  of(keys: Iterable<RecordKey>): Iterable<OutcomeMark> | undefined {
    if (this.#planned) return undefined;
    const slots = this.#slots;
    const named = this.#named;
    return (function* () {
      for (const key of keys) {
        const mark = typeof key === 'string' ? named.get(key) : (slots[key] ?? 0) - 1;
        if (mark !== undefined && mark >= 0) yield mark;
      }
    })();
  }
}

/** Where a run's records are kept between their emission and the finish step. */
export type RecordStore = {
  put(key: RecordKey, entry: ReportEntry): void;
  get(key: RecordKey): ReportEntry | undefined;
  /** The record's JSON Lines line (outputs/json.ts jsonLine, newline included) as kept, if the store keeps it. */
  jsonLine?(key: RecordKey): string | undefined;
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
 * key's slot. A line is three parts split by tabs: the record as JSON Lines writes it
 * (recordFields) with results null, the report entry as JSON with results null, then the
 * results' JSON text (JSON escapes tabs and newlines inside strings, so none appears raw in any
 * part). The JSON Lines writer copies a record's line from the first and last parts, reading no
 * JSON; read as an entry (its own fields in its own order, as the report writes them), results
 * come back as stored results (outputs/stored-results.ts), which every writer reads like the original.
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
    const line = this.#line(key);
    return line === undefined ? undefined : parseSpoolLine(line);
  }

  jsonLine(key: RecordKey): string | undefined {
    const line = this.#line(key);
    return line === undefined ? undefined : spooledJsonLine(line);
  }

  close(): void {
    this.#named.clear();
    this.#lines.close();
  }

  #line(key: RecordKey): string | undefined {
    this.#lines.assertOpen(READ_AFTER_CLOSE);
    return typeof key === 'number' ? this.#lines.get(key) : this.#named.get(key);
  }
}

/** A record as one spool line (without its newline): see RecordSpool. */
function spoolLine(entry: ReportEntry): string {
  const results = entry.results;
  const stored = typeof results === 'object' && results !== null;
  const own = JSON.stringify(recordFields(entry, null));
  const head = stored ? { ...entry, results: null } : entry;
  // A field present but undefined (a dry run's pages_estimate) stays present when read back; a
  // replacer only where one is (a call per value otherwise costs a rerun more than the rest).
  const text = Object.values(head).some((v) => v === undefined)
    ? JSON.stringify(head, keepUndefined)
    : JSON.stringify(head);
  return `${own}\t${text}\t${stored ? (storedText(results) ?? JSON.stringify(results)) : ''}`;
}

function parseSpoolLine(line: string): ReportEntry {
  const first = line.indexOf('\t');
  const second = line.indexOf('\t', first + 1);
  const head = line.slice(first + 1, second);
  const entry = JSON.parse(head) as ReportEntry;
  if (head.includes(UNDEFINED_JSON))
    for (const [key, value] of Object.entries(entry)) if (value === UNDEFINED) Reflect.set(entry, key, undefined);
  const results = line.slice(second + 1);
  if (results !== '') entry.results = storedResults(results);
  return entry;
}

/** A spool line's record as the JSON Lines writer writes it (outputs/json.ts jsonLine): its results where their null was. */
function spooledJsonLine(line: string): string {
  const own = line.slice(0, line.indexOf('\t'));
  const results = line.slice(line.lastIndexOf('\t') + 1);
  return results === '' ? `${own}\n` : `${own.slice(0, -'null}'.length)}${results}}\n`;
}

function keepUndefined(key: string, value: unknown): unknown {
  return value === undefined && key !== '' ? UNDEFINED : value;
}

/** What an undefined field is written as: a string no record field holds. */
const UNDEFINED = '\u0000undefined';
const UNDEFINED_JSON = JSON.stringify(UNDEFINED).slice(1, -1);

/** The record key of an input that could not be read (it has no real path or content). */
export function unreadableKey(file: string): string {
  return `unreadable:${file}`;
}
