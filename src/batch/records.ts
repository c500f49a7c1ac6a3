import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamWriter } from '../outputs/index.ts';
import { storedResults, storedText } from '../outputs/stored-results.ts';
import type { ReportEntry } from './summary.ts';

/**
 * The run's records, one per input, filled as documents end (in any order) and read back in
 * input order for the outputs and the report. With a streamed output (-o - as JSON Lines) each
 * record is also written the moment it is known.
 *
 * A record is not held in memory once emitted: it goes to a spool file (RecordSpool) and is read
 * back, one at a time, each time the finish step walks the batch (outputs, summary, report), so
 * a run over 100,000 documents holds an offset per document, not its record (issue 26 item 1).
 * Where no spool can be made (no writable temp directory), records are kept in memory as before.
 */
export type Records = {
  emit(key: string, entry: ReportEntry): void;
  /** Replaces an emitted record without emitting it again (the finish step's --move-done notes). */
  update(key: string, entry: ReportEntry): void;
  /** The record of one input, if emitted. */
  get(key: string): ReportEntry | undefined;
  /** The records of `keys` that were emitted, in that order: read again at each iteration. */
  inOrder(keys: readonly string[]): Iterable<ReportEntry>;
  /** Frees the spool (its file descriptor) at once: no record can be read after. */
  close(): void;
};

export function createRecords(
  stream: StreamWriter | undefined,
  onRecord?: ((entry: ReportEntry) => void) | undefined,
  store: RecordStore = RecordSpool.open() ?? new MemoryRecords(),
): Records {
  return {
    emit(key, entry) {
      if (stream) void stream.write(entry);
      onRecord?.(entry);
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
  put(key: string, entry: ReportEntry): void;
  get(key: string): ReportEntry | undefined;
  close?(): void;
};

/** Every record as its object: the store of a run that cannot spool, and the reference the spool is tested against. */
export class MemoryRecords implements RecordStore {
  readonly #entries = new Map<string, ReportEntry>();
  #closed = false;

  put(key: string, entry: ReportEntry): void {
    if (this.#closed) throw new Error(WRITTEN_AFTER_CLOSE);
    this.#entries.set(key, entry);
  }

  get(key: string): ReportEntry | undefined {
    if (this.#closed) throw new Error(READ_AFTER_CLOSE);
    return this.#entries.get(key);
  }

  /** As the spool's: no record is read after, so a caller that would read one fails here too. */
  close(): void {
    this.#closed = true;
    this.#entries.clear();
  }
}

const READ_AFTER_CLOSE = 'records: read after the run released them';
const WRITTEN_AFTER_CLOSE = 'records: written after the run released them';

/** Appends are buffered up to this many bytes; reads are served from a window of this size. */
const BLOCK = 256 * 1024;

/**
 * A spool nobody closed (a run that threw, a summary never released) has its descriptor closed
 * once it is unreachable; close() unregisters it first, so a descriptor number the process has
 * reused since is never closed by mistake.
 */
const closeWhenCollected = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // Already closed: nothing to free.
  }
});

/**
 * Records on disk: each one a line, appended as it is emitted, found again by its offset.
 *
 * The file is unlinked as soon as it is opened: nothing is left behind by a crash, and it lives
 * as long as its descriptor (closed by close(), when the store is collected, or at exit). A line is the
 * record as JSON with its results set to null, a tab, then the results' JSON text (JSON escapes
 * tabs and newlines inside strings, so neither appears raw in either part); results come back
 * as stored results (outputs/stored-results.ts), which every writer reads like the original.
 */
export class RecordSpool implements RecordStore {
  readonly #fd: number;
  /** key -> slot; a slot's line is at offsets[slot], lengths[slot] bytes long. */
  readonly #slots = new Map<string, number>();
  #offsets = new Float64Array(1024);
  #lengths = new Float64Array(1024);
  #used = 0;
  /** Bytes written to the file so far, and the lines appended since, not yet written. */
  #written = 0;
  #pending: string[] = [];
  #pendingBytes = 0;
  /** The last block read, and where in the file it starts. */
  #buffer = Buffer.alloc(0);
  #windowAt = 0;
  #windowLength = 0;
  #closed = false;
  /** The slot of each pending line, in the same order. */
  #pendingSlots: number[] = [];
  /** Once a write failed: lines kept in memory by slot, never written. */
  #unwritable = false;
  readonly #kept = new Map<number, string>();

  private constructor(fd: number) {
    this.#fd = fd;
    closeWhenCollected.register(this, fd, this);
  }

  /** A spool in the temp directory, or undefined when none can be made there. */
  static open(dir = tmpdir()): RecordSpool | undefined {
    let folder: string | undefined;
    let fd: number | undefined;
    try {
      folder = mkdtempSync(join(dir, 'extract-records-'));
      const path = join(folder, 'records');
      fd = openSync(path, 'w+', 0o600);
      unlinkSync(path);
      return new RecordSpool(fd);
    } catch {
      if (fd !== undefined) closeSync(fd);
      return undefined;
    } finally {
      if (folder !== undefined)
        try {
          rmSync(folder, { recursive: true, force: true });
        } catch {
          // An empty folder left in the temp directory: nothing of the run is in it.
        }
    }
  }

  put(key: string, entry: ReportEntry): void {
    if (this.#closed) throw new Error(WRITTEN_AFTER_CLOSE);
    const line = spoolLine(entry);
    const bytes = Buffer.byteLength(line);
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      slot = this.#used++;
      this.#slots.set(key, slot);
      if (slot >= this.#offsets.length) this.#grow();
    }
    if (this.#unwritable) {
      this.#kept.set(slot, line);
      return;
    }
    this.#pendingSlots.push(slot);
    this.#offsets[slot] = this.#written + this.#pendingBytes;
    this.#lengths[slot] = bytes;
    this.#pending.push(line);
    this.#pendingBytes += bytes;
    if (this.#pendingBytes >= BLOCK) this.#flush();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeWhenCollected.unregister(this);
    this.#pending = [];
    this.#pendingSlots = [];
    this.#kept.clear();
    closeSync(this.#fd);
  }

  get(key: string): ReportEntry | undefined {
    if (this.#closed) throw new Error(READ_AFTER_CLOSE);
    const slot = this.#slots.get(key);
    if (slot === undefined) return undefined;
    const offset = this.#offsets[slot] ?? 0;
    const length = this.#lengths[slot] ?? 0;
    if (!this.#kept.has(slot) && offset + length > this.#written) this.#flush();
    const kept = this.#kept.get(slot);
    return parseSpoolLine(kept ?? this.#read(offset, length));
  }

  #grow(): void {
    const offsets = new Float64Array(this.#offsets.length * 2);
    const lengths = new Float64Array(this.#lengths.length * 2);
    offsets.set(this.#offsets);
    lengths.set(this.#lengths);
    this.#offsets = offsets;
    this.#lengths = lengths;
  }

  /**
   * Writes the pending lines. A temp directory that refuses them (full: a small tmpfs; an I/O
   * error) must not fail a run whose documents are paid for: the lines not written, and every
   * later one, are kept in memory instead, as a run that could not open a spool keeps them.
   */
  #flush(): void {
    if (this.#pendingBytes === 0) return;
    const data = Buffer.from(this.#pending.join(''));
    try {
      let done = 0;
      while (done < data.length) done += writeSync(this.#fd, data, done, data.length - done, this.#written + done);
      this.#written += data.length;
    } catch {
      this.#unwritable = true;
      // In order: a record updated while pending keeps its last line.
      for (const [i, line] of this.#pending.entries()) this.#kept.set(this.#pendingSlots[i] ?? -1, line);
    }
    this.#pending = [];
    this.#pendingSlots = [];
    this.#pendingBytes = 0;
  }

  /** The text of bytes [offset, offset + length): from the window when it holds them, else a new window read there. */
  #read(offset: number, length: number): string {
    const start = offset - this.#windowAt;
    if (start >= 0 && start + length <= this.#windowLength) return this.#buffer.toString('utf8', start, start + length);
    const size = Math.max(BLOCK, length);
    if (this.#buffer.length < size) this.#buffer = Buffer.allocUnsafe(size);
    // The old window is gone from here on, whether or not this read succeeds.
    this.#windowLength = 0;
    let got = 0;
    // Fewer bytes than the window only at the end of the file; the record itself is always there.
    while (got < length) {
      const n = readSync(this.#fd, this.#buffer, got, size - got, offset + got);
      if (n === 0) throw new Error(`record spool: ${length} bytes expected at ${offset}, the file ended first`);
      got += n;
    }
    this.#windowAt = offset;
    this.#windowLength = got;
    return this.#buffer.toString('utf8', 0, length);
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
  return `${text}\t${stored ? (storedText(results) ?? JSON.stringify(results)) : ''}\n`;
}

function parseSpoolLine(line: string): ReportEntry {
  const tab = line.indexOf('\t');
  const head = line.slice(0, tab);
  const entry = JSON.parse(head) as ReportEntry;
  if (head.includes(UNDEFINED_JSON))
    for (const [key, value] of Object.entries(entry)) if (value === UNDEFINED) Reflect.set(entry, key, undefined);
  const results = line.slice(tab + 1, -1);
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
