import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { storedResults, resultsJson } from '../../outputs/stored-results.ts';
import { replayer, stateKey, type KnownState, type ParserFact, type ReplayState } from '../journal.ts';
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
 *
 * The file, after its checksum line: a header line (JSON: the offset, the journal's identity,
 * and `before`), then one line per document, its latest fact as JSON. A completed fact's
 * results follow a tab, as the JSON text they were stored as (JSON text holds no raw tab): a
 * rerun keeps them as text (outputs/stored-results.ts), which the JSON Lines output copies.
 */

const VERSION = 3;
/** Bytes before the offset compared with the index's digest of them. */
const TAIL_BYTES = 4096;

type IndexHeader = {
  v: number;
  ino: string;
  bytes: number;
  tail: string;
  skipped: number;
  before: Array<[string, KnownState | null]>;
  parsers: ParserFact[];
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
export async function loadIndexed(journal: string): Promise<IndexedReplay | undefined> {
  const body = readChecksummed(indexPathFor(journal));
  if (body === undefined) return undefined;
  const lines = body.split('\n');
  const index = parseHeader(lines[0]);
  if (index === undefined) return undefined;
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

  const known = readKnown(lines);
  if (known === undefined) return undefined;
  const live = replayer({
    known,
    before: new Map(index.before.map(([key, fact]) => [key, fact ?? undefined])),
    parsers: new Map(index.parsers.map((fact) => [fact.target, fact])),
  });
  // Facts after the offset are validated (journal-facts.ts and zod load only when there are some).
  const tail = bytes.subarray(index.bytes - start).toString('utf8');
  const after =
    tail === '' ? { facts: [], skipped: 0 } : (await import('../journal-facts.ts')).parseJournal(tail, journal);
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
  const header: IndexHeader = {
    v: VERSION,
    ino: String(info.ino),
    bytes,
    tail: sha256Hex(readRange(journal, start, bytes)),
    skipped,
    before: [...state.before].map(([key, fact]) => [key, fact ?? null]),
    parsers: [...state.parsers.values()],
  };
  const lines = [JSON.stringify(header)];
  for (const fact of state.known.values()) {
    if (fact.fact === 'completed' && fact.results !== null) {
      const { results, ...rest } = fact;
      lines.push(`${JSON.stringify(rest)}\t${resultsJson(results)}`);
    } else lines.push(JSON.stringify(fact));
  }
  writeChecksummed(indexPathFor(journal), lines.join('\n'));
}

/** The documents' lines (after the header), keyed as the replay keys them; undefined if one is not a fact. */
function readKnown(lines: string[]): Map<string, KnownState> | undefined {
  const known = new Map<string, KnownState>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const tab = line.indexOf('\t');
    let fact: unknown;
    try {
      fact = JSON.parse(tab < 0 ? line : line.slice(0, tab));
    } catch {
      return undefined;
    }
    if (!isKnownState(fact)) return undefined;
    if (tab >= 0) {
      if (fact.fact !== 'completed') return undefined;
      fact.results = storedResults(line.slice(tab + 1));
    }
    known.set(stateKey(fact.sha256, fact.target), fact);
  }
  return known;
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
function parseHeader(line: string | undefined): IndexHeader | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line ?? '');
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Partial<Record<keyof IndexHeader, unknown>>;
  const ok =
    v.v === VERSION &&
    typeof v.ino === 'string' &&
    typeof v.bytes === 'number' &&
    typeof v.tail === 'string' &&
    typeof v.skipped === 'number' &&
    Array.isArray(v.before) &&
    Array.isArray(v.parsers);
  return ok ? (value as IndexHeader) : undefined;
}

function isKnownState(value: unknown): value is KnownState {
  if (typeof value !== 'object' || value === null) return false;
  const f = value as Record<string, unknown>;
  return typeof f.fact === 'string' && typeof f.sha256 === 'string' && typeof f.target === 'string';
}
