import type { Offers } from '../../client/offers.ts';
import type { KnownLookup } from '../../journal/journal.ts';
import type { Identity } from '../../journal/identity.ts';
import type { StateJournal } from '../../journal/state/index.ts';
import type { IgnoredInput, Job } from './jobs.ts';
import type { FileStamp, LinkNotFollowed, UnreadableInput } from '../discover.ts';
import type { Unsettled } from './settle.ts';
import { Int32List } from '../int32-list.ts';
import { LineSpool } from '../spool.ts';

/**
 * The plan as the send and finish steps read it. The plan step decides one window of inputs at
 * a time and writes each job here as it is decided: a run over 100,000 files holds its jobs on
 * disk (PlanStore), the send step's queue as numbers (Int32List), and a number or two per
 * document to find copies (CopyIndex), not a Job per document.
 */
export type BatchPlan = {
  journal: StateJournal;
  /** What the journal knows of each document (a large file hashed on its upload is looked up in it). */
  known: KnownLookup;
  /** The journal's fingerprint of base URL and key ('no-key' for a dry run without one). */
  targetId: string;
  /** The parser's targets in the journal, which the run's documents are looked up under. */
  identity: Identity;
  /** What the service is known to offer, from the journal (client/offers.ts). */
  offers?: Offers | undefined;
  /** One per readable input that is a document (or named by itself), in input order: job.ordinal is its place. */
  jobs: PlanStore;
  /** The documents the send step works on: resumed first, then sent, then (a shared journal) checked. */
  queue: SendQueue;
  /** Inputs whose content an earlier input of the batch has, sent once: ordinal -> the first input's ordinal. */
  copies: Map<number, number>;
  unreadable: UnreadableInput[];
  ignored: IgnoredInput[];
  /** Symbolic links the walk left out (they lead out of the folder walked): listed in --report. */
  linksNotFollowed: LinkNotFollowed[];
  /** Hidden files and folders the walk left out (no --hidden): listed in --report. */
  hidden?: string[] | undefined;
  /** Files changed within --settle: left for the next run, listed in --report. */
  unsettled?: Unsettled[] | undefined;
  /**
   * The stat of a file as it was read to be sent, where it is not its job's `read` (it changed
   * after the plan, or was hashed on its upload): what --move-done compares, by ordinal.
   */
  readAtSend?: Map<number, FileStamp> | undefined;
};

export type SendQueue = { resume: Int32List; submit: Int32List; check: Int32List };

export function sendQueue(): SendQueue {
  return { resume: new Int32List(), submit: new Int32List(), check: new Int32List() };
}

/** The number of documents the send step has to work on. */
export function queued(queue: SendQueue): number {
  return queue.resume.length + queue.submit.length + queue.check.length;
}

/**
 * The batch's jobs by ordinal. Each is a line on disk (JSON; a path that is bytes as base64),
 * read back whole when the send step takes it or the finish step walks the batch; where no spool
 * can be made, the jobs are kept in memory.
 */
export class PlanStore {
  readonly #lines: LineSpool | undefined;
  readonly #memory: Job[] = [];
  #count = 0;

  private constructor(lines: LineSpool | undefined) {
    this.#lines = lines;
  }

  static open(dir?: string): PlanStore {
    return new PlanStore(LineSpool.open(dir));
  }

  /** In memory, whatever the temp directory: for tests and small batches made by hand. */
  static inMemory(jobs: readonly Job[] = []): PlanStore {
    const store = new PlanStore(undefined);
    for (const job of jobs) store.add(job);
    return store;
  }

  get count(): number {
    return this.#count;
  }

  /** Stores the next job: its ordinal must be the store's count. */
  add(job: Job): void {
    if (job.ordinal !== this.#count)
      throw new Error(`plan store: job ${job.ordinal} added as number ${this.#count} (out of order)`);
    this.#count++;
    if (this.#lines === undefined) this.#memory.push(job);
    else this.#lines.put(job.ordinal, encodeJob(job));
  }

  /**
   * Counts the next job without storing it: a job no later step reads (a document the journal
   * settled, when neither --dry-run nor --move-done/--move-failed walks the batch). A rerun's
   * batch is mostly these: writing each to disk was a tenth of a rerun's CPU.
   */
  skip(job: Job): void {
    if (job.ordinal !== this.#count)
      throw new Error(`plan store: job ${job.ordinal} skipped as number ${this.#count} (out of order)`);
    this.#count++;
    if (this.#lines === undefined) this.#memory.push(SKIPPED);
  }

  get(ordinal: number): Job {
    if (ordinal < 0 || ordinal >= this.#count) throw new Error(`plan store: no job ${ordinal}`);
    const job = this.#lines === undefined ? this.#memory[ordinal] : undefined;
    if (job !== undefined && job !== SKIPPED) return job;
    const line = this.#lines?.get(ordinal);
    if (line === undefined) throw new Error(`plan store: job ${ordinal} was not stored (skipped)`);
    return decodeJob(line);
  }

  /** Every job, in input order, read one at a time. */
  *[Symbol.iterator](): Generator<Job> {
    for (let i = 0; i < this.#count; i++) yield this.get(i);
  }

  close(): void {
    this.#lines?.close();
  }
}

/** The place of a job counted but not stored (PlanStore.skip). */
const SKIPPED = {} as Job;

/** A job as one line: the job as JSON, its path (and folder) as `pathBytes` (base64) when it is not a string. */
function encodeJob(job: Job): string {
  const { stamp: _stamp, path, within, ...input } = job.input;
  const stored = {
    ...input,
    ...(typeof path === 'string' ? { path } : { pathBytes: path.toString('base64') }),
    ...(within === undefined
      ? {}
      : typeof within === 'string'
        ? { within }
        : { withinBytes: within.toString('base64') }),
  };
  return JSON.stringify({ ...job, input: stored });
}

function decodeJob(line: string): Job {
  const job = JSON.parse(line) as Job & { input: { pathBytes?: string; withinBytes?: string } };
  const { pathBytes, withinBytes } = job.input;
  if (pathBytes !== undefined) {
    job.input.path = Buffer.from(pathBytes, 'base64');
    delete job.input.pathBytes;
  }
  if (withinBytes !== undefined) {
    job.input.within = Buffer.from(withinBytes, 'base64');
    delete job.input.withinBytes;
  }
  return job;
}

/**
 * The send step's documents as the claim loop takes them: from the front of each list in turn,
 * read from the plan store only when taken (claims.ts JobSource).
 */
export class QueuedJobs {
  readonly #store: PlanStore;
  readonly #lists: Int32List[];
  #list = 0;
  #next = 0;
  #left: number;

  constructor(store: PlanStore, lists: Int32List[]) {
    this.#store = store;
    this.#lists = lists;
    this.#left = lists.reduce((n, l) => n + l.length, 0);
  }

  get size(): number {
    return this.#left;
  }

  take(n: number): Job[] {
    const out: Job[] = [];
    while (out.length < n && this.#list < this.#lists.length) {
      const list = this.#lists[this.#list] as Int32List;
      if (this.#next >= list.length) {
        this.#list++;
        this.#next = 0;
        continue;
      }
      out.push(this.#store.get(list.at(this.#next++)));
      this.#left--;
    }
    return out;
  }
}

/**
 * Finds the first input of the batch with a job's key (the same content under the same parser):
 * a hash of each first input's key, the key itself read back from the plan store to confirm a
 * match. About 30 bytes a document, where a map of the keys held ~170.
 */
export class CopyIndex {
  readonly #store: PlanStore;
  readonly #byHash = new Map<number, number | number[]>();

  constructor(store: PlanStore) {
    this.#store = store;
  }

  /** The ordinal of the first input (stored already) whose key is `job.key`; undefined if none. */
  firstOf(job: Job): number | undefined {
    const found = this.#byHash.get(hashKey(job.key));
    if (found === undefined) return undefined;
    for (const ordinal of typeof found === 'number' ? [found] : found)
      if (this.#store.get(ordinal).key === job.key) return ordinal;
    return undefined;
  }

  /** Records `job` (stored already) as the first input of its key. */
  add(job: Job): void {
    const hash = hashKey(job.key);
    const found = this.#byHash.get(hash);
    if (found === undefined) this.#byHash.set(hash, job.ordinal);
    else if (typeof found === 'number') this.#byHash.set(hash, [found, job.ordinal]);
    else found.push(job.ordinal);
  }
}

/** FNV-1a over the key's UTF-16 code units, cut to 30 bits: a small integer, which a Map holds without a box. */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}
