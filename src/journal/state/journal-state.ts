import type { Log } from '../../client/deps.ts';
import type { JournalFact, JournalWriter, JournalView, KnownState, Replay, WriteBytes } from '../journal.ts';
import type { LockDeps } from '../lock.ts';

/** What every backend of the journal is and shares (index.ts opens them; they import this, not it). */

/**
 * The journal as the batch sees it, whatever keeps it: the JSONL file (the default, one
 * worker, guarded by a lock file) or PostgreSQL (many workers on one batch). The run plans
 * from `replay()`, takes documents with `claim()` before working on them, writes facts with
 * `append()` and gives documents back with `release()`; the pipeline only appends, and
 * never learns which backend it has.
 */
export interface StateJournal extends JournalWriter {
  /** For messages: the file's path, or the database URL with its password redacted. */
  readonly where: string;
  /** True when other workers may use this journal at the same time (PostgreSQL). */
  readonly shared: boolean;
  /** This worker's name in the journal (host/pid/nonce), shown by `extract status`. */
  readonly worker: string;
  /** What every earlier fact says: the latest state of each document (a whole replay: status, tests). */
  replay(): Promise<Replay>;
  /**
   * What a run starts from: the journal's answers per document, looked up through its
   * projection, so opening costs the same whatever the journal knows.
   */
  view(): Promise<JournalView>;
  /**
   * Takes up to `max` of `keys` for this worker: documents no live worker holds (never
   * claimed, released, or whose holder's lease ran out). The answer says what the journal
   * knows of each at that moment, which may be newer than the replay.
   */
  claim(keys: readonly string[], max: number): Promise<Claim[]>;
  /** Gives documents back once their outcome is written (or this worker leaves them). */
  release(keys: readonly string[]): Promise<void>;
  /** Whether this worker lost `key` to another (its lease ran out): it must not send it. */
  lost(key: string): boolean;
  /** Which live worker holds each of `keys` now (those no one holds are absent). */
  holders(keys: readonly string[]): Promise<Map<string, string>>;
  /** Every fact with its worker, and the workers: what `extract status` shows. */
  history(): Promise<History>;
}

export type WorkerInfo = {
  id: string;
  host: string;
  pid: number;
  started: string;
  seen: string;
  finished: string | null;
  /** Seen within its lease and not finished. */
  alive: boolean;
  /** Documents it holds now. */
  holding: number;
};

export type History = {
  facts: Array<{ fact: JournalFact; worker: string | null }>;
  workers: WorkerInfo[];
  /** Facts that could not be read (a torn last line of the file). */
  skipped: number;
};

/** A document this worker now holds. */
export type Claim = {
  key: string;
  /** The latest state of the document at the claim. */
  known: KnownState | undefined;
  /** The latest fact was written by another worker while this run was going: its outcome stands for this run. */
  concurrent: boolean;
  /** The worker whose lease ran out, when this claim takes a document over from it. */
  takenFrom: string | null;
};

/** The journal refused a fact because another worker took the document over: nothing was sent. */
export class ClaimLostError extends Error {
  readonly code = 'claim_lost';
  readonly key: string;
  constructor(key: string) {
    super('another worker took this document over (this worker held it past its lease): it was not sent from here');
    this.name = 'ClaimLostError';
    this.key = key;
  }
}

/** How long a shared journal's claim lasts without renewal (--lease's default); the holder renews it every third of that. */
export const DEFAULT_LEASE_MS = 30_000;

export type OpenStateOptions = {
  /** --dry-run: read only; no lock, no worker, no writes. */
  readOnly: boolean;
  /** How long a claim stays valid without renewal (PostgreSQL). */
  leaseMs: number;
  log: Log;
  lock?: LockDeps | undefined;
  /** How long the database may be unreachable before the run gives up (PostgreSQL). */
  outageMs?: number | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** The lease clock of the SQLite journal (the wall clock every process on the machine shares). */
  now?: (() => number) | undefined;
  /** The journal refused a write (a full disk, a lock held past the wait): called once, so the run stops sending (rescue.ts). */
  onWriteFailed?: ((err: Error) => void) | undefined;
  /** How the JSONL file's bytes are written (tests inject a full disk). */
  write?: WriteBytes | undefined;
  /** The environment: where a rescue file may go ($XDG_RUNTIME_DIR). */
  env?: Record<string, string | undefined> | undefined;
};

/**
 * Says which schema versions opening a journal applied: a journal made now is routine (every
 * first run makes one, said with -v only); an upgrade of one that existed is news.
 */
export function logMigrations(log: Log, where: string, applied: readonly number[]): void {
  if (applied.length === 0) return;
  if (applied[0] === 1) log('debug', `${where}: journal tables created (schema version ${applied.at(-1)})`);
  else log('info', `${where}: journal tables upgraded (schema version ${applied.join(', ')})`);
}
