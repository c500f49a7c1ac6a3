import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Lines of text on disk, each found again by its slot: what a run would otherwise hold for every
 * document of its batch (its plan, its records) waits here between being made and being read
 * again, so a run over 100,000 documents holds two numbers a line, not the line.
 *
 * The file is unlinked as soon as it is opened: nothing is left behind by a crash, and it lives
 * as long as its descriptor (closed by close(), when the spool is collected, or at exit). A line
 * written again for the same slot is appended and the slot points at the new copy.
 */
export class LineSpool {
  readonly #fd: number;
  /** A slot's line is at offsets[slot], lengths[slot] bytes long. */
  #offsets = new Float64Array(1024);
  #lengths = new Float64Array(1024);
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
  static open(dir = tmpdir()): LineSpool | undefined {
    let folder: string | undefined;
    let fd: number | undefined;
    try {
      folder = mkdtempSync(join(dir, 'extract-spool-'));
      const path = join(folder, 'lines');
      fd = openSync(path, 'w+', 0o600);
      unlinkSync(path);
      return new LineSpool(fd);
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

  /** Stores `line` (no newline in it) as slot `slot`'s. */
  put(slot: number, line: string): void {
    if (this.#closed) throw new Error(WRITTEN_AFTER_CLOSE);
    while (slot >= this.#offsets.length) this.#grow();
    if (this.#unwritable) {
      this.#kept.set(slot, line);
      return;
    }
    const bytes = Buffer.byteLength(line) + 1;
    this.#pendingSlots.push(slot);
    this.#offsets[slot] = this.#written + this.#pendingBytes;
    this.#lengths[slot] = bytes;
    this.#pending.push(line, '\n');
    this.#pendingBytes += bytes;
    if (this.#pendingBytes >= BLOCK) this.#flush();
  }

  /** Slot `slot`'s line; undefined when none was put there. */
  get(slot: number): string | undefined {
    if (this.#closed) throw new Error(READ_AFTER_CLOSE);
    const kept = this.#kept.get(slot);
    if (kept !== undefined) return kept;
    const length = this.#lengths[slot] ?? 0;
    // A line has at least its newline: a slot never put has length 0.
    if (length === 0) return undefined;
    const offset = this.#offsets[slot] ?? 0;
    if (offset + length > this.#written) this.#flush();
    const again = this.#kept.get(slot);
    return again ?? this.#read(offset, length).slice(0, -1);
  }

  /** Throws `message` once the spool is closed. */
  assertOpen(message = READ_AFTER_CLOSE): void {
    if (this.#closed) throw new Error(message);
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
      // In order: a slot put again while pending keeps its last line.
      for (const [i, slot] of this.#pendingSlots.entries()) this.#kept.set(slot, this.#pending[i * 2] ?? '');
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
    // Fewer bytes than the window only at the end of the file; the line itself is always there.
    while (got < length) {
      const n = readSync(this.#fd, this.#buffer, got, size - got, offset + got);
      if (n === 0) throw new Error(`spool: ${length} bytes expected at ${offset}, the file ended first`);
      got += n;
    }
    this.#windowAt = offset;
    this.#windowLength = got;
    return this.#buffer.toString('utf8', 0, length);
  }
}

export const READ_AFTER_CLOSE = 'records: read after the run released them';
export const WRITTEN_AFTER_CLOSE = 'records: written after the run released them';

/**
 * Appends are buffered up to this many bytes; reads are served from a window of this size. Lines
 * waiting for their write live through young collections: a small block lets them die young.
 */
const BLOCK = 64 * 1024;

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
