import { writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { costNothing } from '../cost/charge.ts';
import type { JournalFact } from './journal-facts.ts';
import { groupCommit, type LogSink } from './state/group-commit.ts';

/**
 * The state journal: an append-only JSON Lines file of facts about documents, each written
 * and flushed to disk the moment it is known, so that a crash at any point loses at most
 * the fact being written. A document is keyed by the sha256 of its content and the target
 * (config's keyFingerprint of base URL and key), so a renamed file is recognised and another parser's key
 * extracts again. The key itself is never written.
 *
 * What the facts are is the zod schema in journal-facts.ts, which validates journal text; this
 * module takes only their types from it, so a run that validates nothing loads no zod.
 */

export type { JournalFact, SentRequest } from './journal-facts.ts';
/** A fact about one document (the others: reset, parser, journal). */
type DocumentFact = Exclude<JournalFact, { fact: 'reset' | 'parser' | 'journal' }>;
/** What an API key is known to be: which parser's documents it sees (journal/identity.ts). */
export type ParserFact = Extract<JournalFact, { fact: 'parser' }>;

/**
 * The format version a journal this version writes starts with (a `journal` fact); facts of a
 * newer version stop the run (journal-read.ts). 1: journals without that line.
 */
export const JOURNAL_VERSION = 2;

/** What an earlier run knew of one document. */
export type KnownState = Exclude<DocumentFact, { fact: 'unsent' }>;

export function stateKey(sha256: string, target: string): string {
  // join() makes one flat string; a template or + makes a rope, which V8 compares with maps'
  // keys by walking it: twice the cost of each of a rerun's 40,000 lookups and inserts.
  return [target, sha256].join(':');
}

export type Replay = {
  /** The latest fact per document (stateKey). */
  known: Map<string, KnownState>;
  /** The latest parser fact per key fingerprint. */
  parsers: Map<string, ParserFact>;
  /** Lines that could not be read (a torn last line after a crash is expected). */
  skipped: number;
  /** Whether the file ends mid-line; the next append starts on a fresh line. */
  torn: boolean;
};

/** All a replay remembers: what the journal index (state/journal-index.ts) keeps, to go on from. */
export type ReplayState = {
  known: Map<string, KnownState>;
  parsers: Map<string, ParserFact>;
  /** Per document whose extract request is out: what was known before it (restored by `unsent`). */
  before: Map<string, KnownState | undefined>;
};

/**
 * The replay, one fact at a time, shared by every journal backend (the JSONL file,
 * PostgreSQL) so that they agree on what a sequence of facts means. Whatever a rule needs to
 * remember beyond the latest state of each document lives in here.
 *
 * The latest fact of each document wins, except that a fact saying nothing happened at the
 * service never erases what an earlier run learned: a --fresh or --retry-failed resend
 * refused (401, 402, the service's own 500: `unsent`) or never connected (a failure that cost
 * nothing) leaves a completed, submitted or uncertain document as it was. A legacy reset
 * forgets all before it.
 */
export function replayer(from?: ReplayState): ReplayState & { apply(fact: JournalFact): void } {
  const known = from?.known ?? new Map<string, KnownState>();
  // What was known of a document before its extract request went out, restored by `unsent`.
  const before = from?.before ?? new Map<string, KnownState | undefined>();
  const parsers = from?.parsers ?? new Map<string, ParserFact>();
  const stores = { known, before, parsers };
  return { known, before, parsers, apply: (fact) => applyFact(stores, fact) };
}

/** Where a replay keeps what it knows: maps, or (state/journal-index.ts) changes over an index on disk. */
export interface Store<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
  clear(): void;
}

export type ReplayStores = {
  known: Store<KnownState>;
  before: Store<KnownState | undefined>;
  parsers: Store<ParserFact>;
};

/** The replay step (see `replayer`) over any stores. */
export function applyFact(stores: ReplayStores, fact: JournalFact): void {
  const { known, before, parsers } = stores;
  if (fact.fact === 'journal') return;
  if (fact.fact === 'parser') {
    parsers.set(fact.target, fact);
    return;
  }
  if (fact.fact === 'reset') {
    known.clear();
    before.clear();
    return;
  }
  const key = stateKey(fact.sha256, fact.target);
  const current = known.get(key);
  if (fact.fact === 'sending') {
    // Nothing known before is the same as no entry (unsent then forgets the document): a
    // journal of first sends keeps no entry per document, nor does its index.
    if (current === undefined) before.delete(key);
    else before.set(key, current);
    known.set(key, fact);
  } else if (fact.fact === 'unsent') {
    const prior = before.get(key);
    before.delete(key);
    if (prior === undefined) known.delete(key);
    else known.set(key, prior);
  } else if (costNothing(fact) && current !== undefined && !costNothing(current)) {
    // Nothing happened at the service: what an earlier run learned stands.
  } else known.set(key, fact);
}

/** The document a fact is about (undefined for a fact about no document: reset, parser, journal). */
export function factKey(fact: JournalFact): string | undefined {
  return fact.fact === 'reset' || fact.fact === 'parser' || fact.fact === 'journal'
    ? undefined
    : stateKey(fact.sha256, fact.target);
}

/**
 * The writing side. Lines are written whole and in order; an append resolves once its line is
 * fdatasync'd. Appends made while a sync is under way share the next write and sync (group commit).
 */
export interface JournalWriter {
  append(fact: JournalFact): Promise<void>;
  close(): Promise<void>;
}

/** How the journal's bytes are written: fs.writeSync's shape (tests inject a full disk). */
export type WriteBytes = (fd: number, bytes: Buffer, offset: number, length: number) => number;

export async function openJournal(path: string, torn: boolean, write: WriteBytes = writeSync): Promise<JournalWriter> {
  const handle: FileHandle = await open(path, 'a', 0o600);
  // A torn last line (a crash mid-write) is ended first, so the next fact starts on a line of its own;
  // a new journal starts with its format version.
  const first = (await handle.stat()).size === 0 ? `${JSON.stringify(versionFact())}\n` : torn ? '\n' : '';
  const log = groupCommit(appendSink(handle, write), first);
  return {
    append: (fact) => log.append(`${JSON.stringify(fact)}\n`),
    close: () => log.close(),
  };
}

/**
 * The journal's sink: lines are written with a synchronous write (a few hundred bytes into the
 * page cache, cheaper than a round trip through the thread pool per batch) and made durable by
 * an fdatasync on the thread pool, which is where the waiting is.
 */
function appendSink(handle: FileHandle, write: WriteBytes): LogSink {
  return {
    write: async (data) => {
      const bytes = Buffer.from(data, 'utf8');
      for (let at = 0; at < bytes.length; ) {
        const written = write(handle.fd, bytes, at, bytes.length - at);
        if (written === 0) throw Object.assign(new Error('the journal accepted no bytes'), { code: 'EIO' });
        at += written;
      }
    },
    datasync: () => handle.datasync(),
    close: () => handle.close(),
  };
}

/** The first fact of a journal this version makes. */
export function versionFact(at = new Date()): JournalFact {
  return { fact: 'journal', at: at.toISOString(), version: JOURNAL_VERSION };
}

/**
 * What the journal knows, looked up per document: a backend answers from an index (SQLite's
 * `extract_documents`, the JSONL journal's sidecar), so opening a journal costs the same
 * whatever it knows, and a run pays per file it looks up, not per document ever sent.
 */
export interface KnownLookup {
  /** The latest state of a document (stateKey), as a replay would say. */
  get(key: string): KnownState | undefined;
  /** Whether the latest fact of some document names this file (`file`, as runs write it). */
  names(file: string): boolean;
  /** The targets documents are journaled under (one per key fingerprint seen: few). */
  targets(): Iterable<string>;
  /**
   * Reads these documents ahead, many in one query (a rerun's whole batch), so that their `get`s
   * cost no query each. Each is kept until its first `get`. A journal whose reads are
   * asynchronous (PostgreSQL) answers `get` only for documents read ahead.
   */
  prefetch?(keys: readonly string[]): void | Promise<void>;
}

/** A replay's map as a lookup (memory journals, PostgreSQL, tests). */
export function knownFromMap(known: ReadonlyMap<string, KnownState>): KnownLookup {
  let named: Set<string> | undefined;
  return {
    get: (key) => known.get(key),
    names: (file) => {
      named ??= new Set(Array.from(known.values(), (f) => f.file));
      return named.has(file);
    },
    targets: () => targetsOf(known.keys()),
  };
}

/** The distinct targets of keys grouped by target (a replay's insertion order, or sorted). */
export function targetsOf(keys: Iterable<string>): Set<string> {
  const out = new Set<string>();
  let last = '';
  for (const key of keys) {
    const target = key.slice(0, key.indexOf(':'));
    if (target === last) continue;
    last = target;
    out.add(target);
  }
  return out;
}

/** A lookup, from either shape. */
export function asLookup(known: KnownLookup | ReadonlyMap<string, KnownState>): KnownLookup {
  return known instanceof Map ? knownFromMap(known) : (known as KnownLookup);
}

/** What a run starts from: lookups into the journal, not its replay. */
export type JournalView = {
  known: KnownLookup;
  /** The latest parser fact per key fingerprint (few). */
  parsers: Map<string, ParserFact>;
  skipped: number;
  torn: boolean;
};
