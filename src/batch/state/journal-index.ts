import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { parseJournal, replayer, type KnownState, type ReplayState } from '../journal.ts';
import { readChecksummed, sha256Hex, writeChecksummed } from './checksummed.ts';

/**
 * The journal index: the replay of the JSONL journal up to a byte offset (the latest fact of
 * each document, and what `unsent` would restore), saved beside it as `<journal>.index`. A
 * rerun reads it and parses only the facts written after that offset, instead of reading and
 * validating the whole history (40,000 lines for 20,000 documents).
 *
 * The journal stays the truth. The index is used only when its checksum holds, the journal is
 * the same file (inode) at least as long as the offset, and the last 4 KB before the offset
 * are the bytes the index saw; otherwise the run replays the whole journal and writes a new
 * index. Facts appended after the offset by a run that did not save the index (a crash) are
 * replayed on top of it.
 */

const VERSION = 1;
/** Bytes before the offset compared with the index's digest of them. */
const TAIL_BYTES = 4096;

type IndexFile = {
  v: number;
  ino: string;
  bytes: number;
  tail: string;
  skipped: number;
  known: Array<[string, KnownState]>;
  before: Array<[string, KnownState | null]>;
};

export function indexPathFor(journal: string): string {
  return `${journal}.index`;
}

export type IndexedReplay = {
  state: ReplayState;
  skipped: number;
  torn: boolean;
  /** Facts read from the journal after the index's offset (0: the index was current). */
  replayedAfter: number;
};

/** The replay from the index and the facts after it; undefined when the index cannot be used. */
export function loadIndexed(journal: string): IndexedReplay | undefined {
  const index = readChecksummed(indexPathFor(journal));
  if (!isIndexFile(index)) return undefined;
  let size: number;
  let ino: string;
  try {
    const info = statSync(journal, { bigint: true });
    size = Number(info.size);
    ino = String(info.ino);
  } catch {
    return undefined;
  }
  if (ino !== index.ino || size < index.bytes) return undefined;
  const start = Math.max(0, index.bytes - TAIL_BYTES);
  const bytes = readRange(journal, start, size);
  if (bytes.length !== size - start) return undefined;
  if (sha256Hex(bytes.subarray(0, index.bytes - start)) !== index.tail) return undefined;

  const live = replayer({
    known: new Map(index.known),
    before: new Map(index.before.map(([key, fact]) => [key, fact ?? undefined])),
  });
  const after = parseJournal(bytes.subarray(index.bytes - start).toString('utf8'));
  for (const fact of after.facts) live.apply(fact);
  return {
    state: live,
    skipped: index.skipped + after.skipped,
    torn: size > 0 && bytes[bytes.length - 1] !== 0x0a,
    replayedAfter: after.facts.length,
  };
}

/** Saves the replay of the journal as it is now on disk (call with no append under way). */
export function saveIndex(journal: string, state: ReplayState, skipped: number): void {
  const info = statSync(journal, { bigint: true });
  const bytes = Number(info.size);
  const start = Math.max(0, bytes - TAIL_BYTES);
  const index: IndexFile = {
    v: VERSION,
    ino: String(info.ino),
    bytes,
    tail: sha256Hex(readRange(journal, start, bytes)),
    skipped,
    known: [...state.known],
    before: [...state.before].map(([key, fact]) => [key, fact ?? null]),
  };
  writeChecksummed(indexPathFor(journal), index);
}

function readRange(path: string, start: number, end: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  const fd = openSync(path, 'r');
  try {
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * The shape only, not each fact: the checksum says the file is the one this program wrote,
 * from facts it had validated; validating 20,000 of them again is what the index saves.
 */
function isIndexFile(value: unknown): value is IndexFile {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Partial<Record<keyof IndexFile, unknown>>;
  return (
    v.v === VERSION &&
    typeof v.ino === 'string' &&
    typeof v.bytes === 'number' &&
    typeof v.tail === 'string' &&
    typeof v.skipped === 'number' &&
    Array.isArray(v.known) &&
    Array.isArray(v.before)
  );
}
