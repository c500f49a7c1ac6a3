import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { ExtractError } from '../../errors.ts';
import { DatabaseSync } from 'node:sqlite';
import {
  applyFact,
  replayer,
  stateKey,
  targetsOf,
  type JournalFact,
  type KnownLookup,
  type KnownState,
  type ParserFact,
  type ReplayState,
  type ReplayStores,
} from '../journal.ts';
import { sha256Hex } from './checksummed.ts';
import { parseJson, readState, rowLookups, splitState, statements } from './projection.ts';
import { Layered, type Meta, type Stores, writeChanges } from './journal-index-changes.ts';

/**
 * The journal index: the replay of the JSONL journal up to a byte offset, kept beside it as
 * `<journal>.index`, a SQLite file (node:sqlite, built in) with one row per document (its
 * latest fact; a completed one's results as the JSON text they were stored as), what `unsent`
 * would restore, and the parser facts. A run opens it and looks documents up by key (or by
 * file name) as it plans them: opening costs the same whatever the journal knows, and no
 * document's results are in memory unless the run asked for that document. Facts written
 * after the offset are replayed on top, in memory; at close, this run's facts (and those) are
 * written into the index in one transaction with the new offset: a run pays for what it
 * changed, not for the history.
 *
 * The journal stays the truth. The index is used only when it opens as a database of this
 * version, the journal is the same file (inode) at least as long as the offset, and the last
 * 4 KB before the offset are the bytes the index saw; otherwise the run replays the whole
 * journal once and writes a new index (into a temporary file, renamed over the old one).
 */

const VERSION = 4;
/** Bytes before the offset compared with the index's digest of them. */
const TAIL_BYTES = 4096;

const SCHEMA = `
  CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), v INTEGER NOT NULL, ino TEXT NOT NULL,
    bytes INTEGER NOT NULL, tail TEXT NOT NULL, skipped INTEGER NOT NULL);
  -- key: target:sha256; state: the latest fact without its results; results: their JSON text.
  CREATE TABLE known (key TEXT PRIMARY KEY, state TEXT NOT NULL, results TEXT, file TEXT NOT NULL);
  CREATE INDEX known_file ON known (file);
  CREATE TABLE before (key TEXT PRIMARY KEY, state TEXT NOT NULL);
  CREATE TABLE parsers (target TEXT PRIMARY KEY, body TEXT NOT NULL);
`;

export function indexPathFor(journal: string): string {
  return `${journal}.index`;
}

/**
 * The replay of a JSONL journal as a run uses it: what the index holds plus the facts after
 * its offset and this run's own, with lookups by key and file name.
 */
export type IndexedJournal = {
  /** Lookups (a snapshot made at the first `apply`: what was known when the run started). */
  readonly known: KnownLookup;
  /** The same, including this run's facts (claims). */
  readonly live: KnownLookup;
  readonly parsers: Map<string, ParserFact>;
  readonly skipped: number;
  readonly torn: boolean;
  /** Facts read from the journal after the index's offset (0: the index was current). */
  readonly replayedAfter: number;
  /** Whether the index was usable (false: the whole journal was replayed). */
  readonly fromIndex: boolean;
  apply(fact: JournalFact): void;
  /** Whether the index on disk is behind what this replay knows. */
  behind(): boolean;
  /** Writes what changed into the index, with the journal's current length as its offset (no append under way). */
  save(): void;
  /** The whole replay as it was at the start, in memory (status, tests): a read of every row. */
  materialize(): ReplayState;
  close(): void;
};

/**
 * Opens the index of `journal`, or replays the journal when it cannot be used. `parse` validates
 * journal text (journal-facts.ts, loaded by the caller only when there is text to read).
 */
export async function openIndexed(
  journal: string,
  parse: () => Promise<(text: string, path: string) => { facts: JournalFact[]; skipped: number; torn?: boolean }>,
  readOnly: boolean,
): Promise<IndexedJournal> {
  const usable = openUsable(journal, readOnly);
  let db: DatabaseSync | undefined;
  let after: { facts: JournalFact[]; skipped: number };
  let torn: boolean;
  let skipped: number;
  if (usable !== undefined) {
    db = usable.db;
    const tail = usable.tail.toString('utf8');
    after = tail === '' ? { facts: [], skipped: 0 } : (await parse())(tail, journal);
    torn = usable.torn;
    skipped = usable.meta.skipped + after.skipped;
  } else {
    const bytes = readAll(journal);
    const text = bytes.toString('utf8');
    const parsed = text === '' ? { facts: [], skipped: 0, torn: false } : (await parse())(text, journal);
    after = parsed;
    torn = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a;
    skipped = parsed.skipped;
  }
  const statement = statements(() => db!);
  const rows = db === undefined ? undefined : rowLookups(statement, 'known');
  const known = new Layered<KnownState>(rows === undefined ? () => undefined : rows.get);
  const prefetch = (keys: readonly string[]): void => rows?.prefetch(keys);
  const before = new Layered<KnownState>(
    db === undefined
      ? () => undefined
      : (key) => {
          const row = statement('SELECT state FROM before WHERE key = ?').get(key);
          return row === undefined ? undefined : readState(row.state, null);
        },
  );
  const parsers = new Map<string, ParserFact>();
  if (db !== undefined)
    for (const row of db.prepare('SELECT body FROM parsers').all()) {
      const fact = parseJson(row.body) as ParserFact;
      parsers.set(fact.target, fact);
    }
  let stores: Stores = {
    known,
    before,
    parsers,
  };
  for (const fact of after.facts) applyFact(stores as ReplayStores, fact);
  const start = stores;
  let forked = false;
  let dirty = usable === undefined || after.facts.length > 0;

  const lookups = (layer: () => Layered<KnownState>): KnownLookup => ({
    get: (key) => layer().get(key),
    prefetch,
    names: (file) => {
      const k = layer();
      for (const [key, fact] of k.changed) if (fact?.file === file && k.get(key) !== undefined) return true;
      if (db === undefined || k.cleared) return false;
      for (const row of statement('SELECT key FROM known WHERE file = ?').all(file))
        if (!k.changed.has(String(row.key))) return true;
      return false;
    },
    targets: () => {
      const k = layer();
      const out = targetsOf([...k.changed].filter(([, fact]) => fact !== undefined).map(([key]) => key));
      if (rows !== undefined && !k.cleared) for (const target of rows.targets()) out.add(target);
      return out;
    },
  });

  return {
    known: lookups(() => start.known),
    live: lookups(() => stores.known),
    parsers: start.parsers,
    skipped,
    torn,
    replayedAfter: after.facts.length,
    fromIndex: usable !== undefined,
    apply(fact) {
      if (!forked) {
        stores = { known: stores.known.fork(), before: stores.before.fork(), parsers: new Map(stores.parsers) };
        forked = true;
      }
      applyFact(stores as ReplayStores, fact);
      dirty = true;
    },
    behind: () => dirty,
    save() {
      if (readOnly) return;
      const info = statSync(journal, { bigint: true });
      const bytes = Number(info.size);
      const meta: Meta = {
        v: VERSION,
        ino: String(info.ino),
        bytes,
        tail: sha256Hex(readRange(journal, Math.max(0, bytes - TAIL_BYTES), bytes)),
        skipped,
      };
      if (db !== undefined) {
        writeChanges(db, stores, meta);
        dirty = false;
        return;
      }
      // A new index: written whole beside the old one, then renamed over it.
      const path = indexPathFor(journal);
      const temporary = `${path}.${process.pid}.tmp`;
      rmSync(temporary, { force: true });
      const fresh = new DatabaseSync(temporary);
      try {
        fresh.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF');
        fresh.exec(SCHEMA);
        writeChanges(fresh, stores, meta);
        fresh.exec('VACUUM');
      } finally {
        fresh.close();
      }
      const fd = openSync(temporary, 'r');
      try {
        // The rename makes it the index: its bytes are on disk first.
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, path);
      dirty = false;
    },
    materialize() {
      const all = new Map<string, KnownState>();
      const prior = new Map<string, KnownState | undefined>();
      const k = start.known;
      const b = start.before;
      if (db !== undefined && !k.cleared) {
        for (const row of db.prepare('SELECT key, state, results FROM known').iterate()) {
          const state = readState(row.state, row.results);
          if (state !== undefined) all.set(String(row.key), state);
        }
      }
      if (db !== undefined && !b.cleared)
        for (const row of db.prepare('SELECT key, state FROM before').iterate())
          prior.set(String(row.key), readState(row.state, null));
      for (const [key, fact] of k.changed) fact === undefined ? all.delete(key) : all.set(key, fact);
      for (const [key, fact] of b.changed) fact === undefined ? prior.delete(key) : prior.set(key, fact);
      return replayer({ known: all, before: prior, parsers: new Map(start.parsers) });
    },
    close() {
      if (db?.isOpen) db.close();
    },
  };
}

/**
 * Writes the index of `journal` as it is on disk from its documents' latest states, streamed
 * (a journal made by a generator: the bench's journals of 10^6 documents). The caller vouches
 * that `known` is the journal's replay.
 */
export function writeIndex(journal: string, known: Iterable<KnownState>, parsers: Iterable<ParserFact> = []): void {
  const info = statSync(journal, { bigint: true });
  const bytes = Number(info.size);
  const path = indexPathFor(journal);
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  const db = new DatabaseSync(temporary);
  try {
    db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF');
    db.exec(SCHEMA);
    db.exec('BEGIN');
    const put = db.prepare('INSERT OR REPLACE INTO known (key, state, results, file) VALUES (?, ?, ?, ?)');
    for (const fact of known) {
      const { state, results } = splitState(fact);
      put.run(stateKey(fact.sha256, fact.target), state, results, fact.file);
    }
    const putParser = db.prepare('INSERT OR REPLACE INTO parsers (target, body) VALUES (?, ?)');
    for (const fact of parsers) putParser.run(fact.target, JSON.stringify(fact));
    db.prepare('INSERT INTO meta (id, v, ino, bytes, tail, skipped) VALUES (1, ?, ?, ?, ?, 0)').run(
      VERSION,
      String(info.ino),
      bytes,
      sha256Hex(readRange(journal, Math.max(0, bytes - TAIL_BYTES), bytes)),
    );
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  renameSync(temporary, path);
}

/** The whole replay from the index and the facts after it; undefined when the index cannot be used (tests). */
export async function loadIndexed(
  journal: string,
): Promise<{ state: ReplayState; skipped: number; torn: boolean; replayedAfter: number } | undefined> {
  const indexed = await openIndexed(journal, async () => (await import('../journal-read.ts')).parseJournal, true);
  try {
    if (!indexed.fromIndex) return undefined;
    return {
      state: indexed.materialize(),
      skipped: indexed.skipped,
      torn: indexed.torn,
      replayedAfter: indexed.replayedAfter,
    };
  } finally {
    indexed.close();
  }
}

/** The index when it matches the journal, with the journal's bytes after its offset. */
function openUsable(
  journal: string,
  readOnly: boolean,
): { db: DatabaseSync; meta: Meta; tail: Buffer; torn: boolean } | undefined {
  let size: number;
  let ino: string;
  try {
    const info = statSync(journal, { bigint: true });
    size = Number(info.size);
    ino = String(info.ino);
    statSync(indexPathFor(journal));
  } catch {
    return undefined;
  }
  let db: DatabaseSync | undefined;
  let shrunk: number | undefined;
  try {
    // A dry run only reads (a journal in a folder it may not write is still read through its index).
    db = new DatabaseSync(indexPathFor(journal), { timeout: 2_000, readOnly });
    if (!readOnly) db.exec('PRAGMA synchronous = FULL');
    const row = db.prepare('SELECT v, ino, bytes, tail, skipped FROM meta WHERE id = 1').get();
    // The same file, shorter than the index saw it: only appended to by runs, so it lost facts.
    if (row !== undefined && String(row.ino) === ino && Number(row.bytes) > size) shrunk = Number(row.bytes);
    if (row === undefined || Number(row.v) !== VERSION || String(row.ino) !== ino || Number(row.bytes) > size)
      throw new Error('stale');
    const meta: Meta = {
      v: VERSION,
      ino,
      bytes: Number(row.bytes),
      tail: String(row.tail),
      skipped: Number(row.skipped),
    };
    const start = Math.max(0, meta.bytes - TAIL_BYTES);
    const bytes = readRange(journal, start, size);
    if (bytes.length !== size - start) throw new Error('short');
    if (sha256Hex(bytes.subarray(0, meta.bytes - start)) !== meta.tail) throw new Error('changed');
    return {
      db,
      meta,
      tail: bytes.subarray(meta.bytes - start),
      torn: size > 0 && bytes[bytes.length - 1] !== 0x0a,
    };
  } catch {
    // Not a database, another version, damaged, or another journal's: replayed and rebuilt.
    if (db?.isOpen) db.close();
    if (shrunk !== undefined) throw shrunkJournal(journal, shrunk, size);
    return undefined;
  }
}

/** A run on a journal that lost facts would pay again for every document they knew. */
function shrunkJournal(journal: string, was: number, now: number): ExtractError {
  return new ExtractError(
    'state',
    `the journal ${journal} is damaged: it was ${was} bytes when a run last wrote to it and is now ${now} (truncated or cut short). ` +
      'Nothing was sent: a run on it would pay again for every document it forgot. ' +
      `Restore the file from a backup if you have one, then remove ${indexPathFor(journal)} (it describes the journal as it was) and rerun; removing it alone goes on with the journal as it is, knowingly`,
  );
}

function readAll(path: string): Buffer {
  try {
    return readRange(path, 0, Number(statSync(path).size));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw err;
  }
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
