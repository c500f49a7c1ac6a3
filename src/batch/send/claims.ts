import type { PollPolicy } from '../../client/backoff.ts';
import type { Log } from '../../client/deps.ts';
import { factKey, type JournalFact, type JournalWriter } from '../../journal/journal.ts';
import { replan, type Job } from '../plan/index.ts';
import { JournalWriteError, type Claim, type StateJournal } from '../../journal/state/index.ts';

/**
 * Feeds the pipeline the documents this worker holds. Before working on a document the
 * worker claims it in the journal; the claim answers with what the journal knows of it at
 * that moment (another worker may have finished it since the replay), and the document is
 * planned again from that. Documents other live workers hold are waited for, up to the poll
 * deadline, and taken over when their holder's lease runs out. With the JSONL file there is
 * one worker: every claim is granted at once, and this is the plain run it always was.
 */
export type WorkThroughInput = {
  state: StateJournal;
  /** The documents to submit or resume, one job per content, in input order (a source reads them as they are taken). */
  jobs: readonly Job[] | JobSource;
  retryFailed: boolean;
  /** --fresh: every document is sent again (the journal keeps what it knew until it is). */
  fresh?: boolean | undefined;
  /** -c: sends at once; a shared worker claims a little ahead of it. */
  concurrency: number;
  /** --max-pending: the most documents a shared worker holds at once beyond its sends. */
  maxPending: number;
  poll: PollPolicy;
  deps: { now: () => number; sleep: (ms: number, signal?: AbortSignal) => Promise<void> };
  signal: AbortSignal;
  /** True once the run stopped submitting (Ctrl+C, 402, --max-credits, a rejected key). */
  stopped: () => boolean;
  log: Log;
  /** Runs a job through the pipeline (submit or resume by its action). */
  start: (job: Job) => Promise<void>;
  /** A claimed document needing no work from this worker: its record comes from the journal. */
  decided: (job: Job, concurrent: boolean) => void;
};

export type WorkThrough = {
  /** The journal to hand the pipeline: it tells the scheduler when a send is over. */
  journal: JournalWriter;
  /** Runs until every job is settled here, or held by another worker past the deadline. */
  run(): Promise<Array<{ job: Job; holder: string | undefined }>>;
  /**
   * Claims `key`, the content a job's file turned out to hold when it was sent, for the job;
   * released with the job's own. Undefined: another worker holds that content.
   */
  adopt(job: Job, key: string): Promise<Claim | undefined>;
};

export function workThrough(input: WorkThroughInput): WorkThrough {
  const loop = new ClaimLoop(input);
  return { journal: loop.journal, run: () => loop.run(), adopt: (job, key) => loop.adopt(job, key) };
}

type Held = Array<{ job: Job; holder: string | undefined }>;

/** The scheduler behind workThrough: one method per step of a worker's loop (admit, claim, wait, settle). */
class ClaimLoop {
  readonly journal: JournalWriter;
  readonly #input: WorkThroughInput;
  readonly #state: StateJournal;
  // Jobs this worker holds and has not seen submitted yet (they need a send slot).
  readonly #sending = new Set<string>();
  readonly #running = new Set<Promise<void>>();
  // Keys claimed for a job's actual content (adopt), by the job's ordinal: released with its own.
  readonly #adopted = new Map<number, string>();
  #kick: (() => void) | undefined;
  #queue: JobQueue;
  #waiting: Job[] = [];
  #failure: { err: unknown } | undefined;
  #waitingSince: number | undefined;
  #round = 0;
  #rechecking = false;

  constructor(input: WorkThroughInput) {
    this.#input = input;
    const state = input.state;
    this.#state = state;
    this.#queue = new JobQueue(input.jobs);
    this.journal = {
      append: async (fact: JournalFact) => {
        await state.append(fact);
        // Any fact after `sending` means the send is over (submitted, completed, failed, unsent).
        const key = fact.fact === 'sending' ? undefined : factKey(fact);
        if (key !== undefined && this.#sending.delete(key)) this.#wake();
      },
      close: () => state.close(),
    };
  }

  async adopt(job: Job, key: string): Promise<Claim | undefined> {
    const [claim] = await this.#state.claim([key], 1);
    if (claim !== undefined) this.#adopted.set(job.ordinal, key);
    return claim;
  }

  async run(): Promise<Held> {
    for (;;) {
      await this.#admit();
      // Each job's end wakes this loop. Not Promise.race(running): every race adds a reaction to
      // every job still running, which is quadratic (20,000 documents: 200 million, out of heap).
      const waitingAtEnd = this.#waiting.length;
      while (this.#running.size > 0) {
        await this.#nextWake();
        this.#rethrow();
      }
      // A document lost to another worker while it ran here (this worker paused past its lease)
      // joins `waiting` when its run ends, which may be after #admit gave up: look at it
      // once more (its new holder may have finished it) before calling it held elsewhere.
      if (this.#waiting.length > waitingAtEnd && !this.#input.stopped() && !this.#input.signal.aborted) {
        this.#recheck();
        continue;
      }
      break;
    }
    return this.#heldElsewhere();
  }

  /** Starts jobs as slots free up until none is left to start here (or the run stopped, or the wait ran out). */
  async #admit(): Promise<void> {
    const input = this.#input;
    // Jobs are admitted as slots free up, whatever the journal: a batch of N files holds about
    // -c + --max-pending jobs in flight, not N promises queued on the limiters.
    for (;;) {
      this.#rethrow();
      if (input.stopped()) {
        this.#settleUnclaimed();
        return;
      }
      const want = claimWant(input, this.#sending.size, this.#running.size);
      if (this.#queue.size > 0 && want > 0) {
        await this.#claim(want);
        continue;
      }
      if (this.#queue.size === 0 && this.#waiting.length === 0) return;
      if (this.#queue.size === 0) {
        if (!(await this.#waitForHeld())) return;
        continue;
      }
      // Full: wait for a send to end or a document to settle.
      await this.#nextWake();
    }
  }

  /**
   * No new claims: the pipeline settles each remaining job as not submitted (or polls
   * one submitted earlier, which costs nothing) without sending anything.
   */
  #settleUnclaimed(): void {
    for (const job of this.#queue.drain()) {
      if (job.action === 'leave') this.#input.decided(job, false);
      else this.#begin(job);
    }
  }

  /** Claims up to `want` documents from the front of the queue and starts those that need work. */
  async #claim(want: number): Promise<void> {
    const input = this.#input;
    const slice = this.#queue.take(claimAsk(this.#state.shared, want));
    let claims: Claim[];
    try {
      claims = await this.#state.claim(
        slice.map((j) => j.key),
        want,
      );
    } catch (err) {
      // The journal failed (the run has stopped submitting): the slice is settled with the rest, unsent.
      if (!(err instanceof JournalWriteError)) throw err;
      this.#queue.putBack(slice);
      return;
    }
    // Documents came free: the others are moving, so look again soon.
    if (this.#rechecking && claims.length > 0) this.#round = 0;
    const { kept, held } = unclaimed(slice, claims, want);
    this.#waiting.push(...held);
    this.#queue.putBack(kept);
    const started: Job[] = [];
    // A claim answers for a key of the slice asked: looked up there, not in a map of the whole batch.
    const asked = new Map(slice.map((j) => [j.key, j]));
    for (const claim of claims) {
      const job = asked.get(claim.key);
      if (!job) continue;
      if (claim.takenFrom !== null)
        input.log('info', `${job.input.file}: taken over from worker ${claim.takenFrom} (its lease ran out)`);
      // Not kept: a claim made again (a document waited for) plans again from the claim's
      // answer, so the plan's job will do, and the batch holds one job per document.
      const next = replan(job, claim.known, input.retryFailed, claim.concurrent, input.fresh === true);
      if (next.action === 'submit' || next.action === 'resume') started.push(next);
      else {
        input.decided(next, claim.concurrent);
        void this.#state.release([job.key]).catch(() => undefined);
      }
    }
    // Documents already paid for first: they need no send slot.
    for (const job of started.filter((j) => j.action === 'resume')) this.#begin(job);
    for (const job of started.filter((j) => j.action === 'submit')) this.#begin(job);
  }

  /**
   * Only documents other workers hold are left: look again after a poll interval. False once
   * the poll deadline has passed or the run was aborted (the rest is held elsewhere).
   */
  async #waitForHeld(): Promise<boolean> {
    const input = this.#input;
    if (this.#waitingSince === undefined) {
      this.#waitingSince = input.deps.now();
      input.log(
        'info',
        `waiting for ${this.#waiting.length} document${this.#waiting.length === 1 ? '' : 's'} other workers hold (up to ${Math.round(input.poll.timeoutMs / 1000)} s, --poll-timeout), to write the whole batch's records`,
      );
    }
    const left = this.#waitingSince + input.poll.timeoutMs - input.deps.now();
    if (left <= 0) return false;
    await Promise.race([
      input.deps.sleep(Math.min(heldDelay(this.#round++, input.poll), left), input.signal),
      this.#nextWake(),
    ]);
    if (input.signal.aborted) return false;
    this.#recheck();
    return true;
  }

  /** The documents waited for go back in the queue, to be claimed again. */
  #recheck(): void {
    this.#queue = new JobQueue(this.#waiting);
    this.#waiting = [];
    this.#rechecking = true;
  }

  async #heldElsewhere(): Promise<Held> {
    const waiting = this.#waiting;
    if (waiting.length === 0) return [];
    const holders = await this.#state.holders(waiting.map((j) => j.key)).catch(() => new Map<string, string>());
    return waiting.map((job) => ({ job, holder: holders.get(job.key) }));
  }

  #begin(job: Job): void {
    if (job.action === 'submit') this.#sending.add(job.key);
    const p = this.#input
      .start(job)
      .catch((err: unknown) => {
        // The journal could not be written (its database gone past the wait): the run stops with that error.
        this.#failure ??= { err };
      })
      .finally(() => this.#ended(job, p));
    this.#running.add(p);
  }

  #ended(job: Job, p: Promise<void>): void {
    const input = this.#input;
    const state = this.#state;
    this.#sending.delete(job.key);
    this.#running.delete(p);
    const adopted = this.#adopted.get(job.ordinal);
    this.#adopted.delete(job.ordinal);
    if (adopted !== undefined) void state.release([adopted]).catch(() => undefined);
    // A document lost to another worker (past its lease) is waited for like any held one.
    if (state.lost(job.key)) {
      input.log(
        'warn',
        `${job.input.file}: another worker took it over (this one held it past its lease); not sent from here, waiting for its outcome`,
      );
      this.#waiting.push(job);
    } else
      void state
        .release([job.key])
        .catch((err) =>
          input.log(
            'warn',
            `could not release ${job.input.file} in ${state.where}: ${err instanceof Error ? err.message : String(err)}`,
          ),
        );
    this.#wake();
  }

  #rethrow(): void {
    if (this.#failure) throw this.#failure.err;
  }

  #wake(): void {
    this.#kick?.();
    this.#kick = undefined;
  }

  #nextWake(): Promise<void> {
    return new Promise((resolve) => {
      const previous = this.#kick;
      this.#kick = () => {
        previous?.();
        resolve();
      };
    });
  }
}

/**
 * How many documents to claim now: sends run -c at once and a worker claims a little ahead of
 * them (-c more), and it holds at most -c + --max-pending jobs at once.
 */
export function claimWant(
  limits: { concurrency: number; maxPending: number },
  sending: number,
  running: number,
): number {
  return Math.min(limits.concurrency * 2 - sending, limits.concurrency + limits.maxPending - running);
}

/**
 * How many queued documents to ask about. One worker is granted every claim: it asks for what it
 * can start. A shared worker asks about more, since other workers may hold some.
 */
export function claimAsk(shared: boolean, want: number): number {
  return shared ? Math.max(64, want * 4) : want;
}

/**
 * The documents of a claimed slice this worker did not get. Granted as many as asked: the rest
 * were not looked at, and go back in the queue (`kept`). Fewer: every other document of the
 * slice is held by a live worker, and is waited for (`held`).
 */
export function unclaimed(
  slice: readonly Job[],
  claims: ReadonlyArray<{ key: string }>,
  want: number,
): { kept: Job[]; held: Job[] } {
  const won = new Set(claims.map((c) => c.key));
  const rest = slice.filter((j) => !won.has(j.key));
  return claims.length < want ? { kept: [], held: rest } : { kept: rest, held: [] };
}

/**
 * Another worker's document cannot wake this one (a pooler forbids LISTEN), so it is looked
 * at again soon and then less often: 200 ms, x1.5, up to the poll's longest interval (5 s at most).
 */
export function heldDelay(round: number, poll: PollPolicy): number {
  return Math.min(200 * 1.5 ** round, poll.maxIntervalMs, 5_000);
}

/** Jobs taken in order from elsewhere (the plan on disk: planned.ts QueuedJobs), read as they are taken. */
export type JobSource = { readonly size: number; take(n: number): Job[] };

/**
 * The jobs not claimed yet, in order, taken from the front by an index: taking a few and putting
 * back those another worker holds costs what was taken, not a copy of the whole queue (which made
 * a batch of N documents O(N^2): 100,000 documents, some 10^9 copied elements). Behind the jobs
 * put back, a source gives the rest as they are taken: the queue holds no job it has not given out.
 */
export class JobQueue {
  #items: Array<Job | undefined>;
  #head = 0;
  readonly #source: JobSource | undefined;

  constructor(items: readonly Job[] | JobSource) {
    if (Array.isArray(items)) {
      this.#items = [...(items as readonly Job[])];
      this.#source = undefined;
    } else {
      this.#items = [];
      this.#source = items as JobSource;
    }
  }

  get size(): number {
    return this.#items.length - this.#head + (this.#source?.size ?? 0);
  }

  /** Up to `n` jobs from the front; the queue lets go of them. */
  take(n: number): Job[] {
    const end = Math.min(this.#items.length, this.#head + n);
    const out: Job[] = [];
    for (let i = this.#head; i < end; i++) {
      out.push(this.#items[i] as Job);
      this.#items[i] = undefined;
    }
    this.#head = end;
    if (out.length < n && this.#source !== undefined) out.push(...this.#source.take(n - out.length));
    return out;
  }

  /** Puts jobs just taken back at the front, in their order. */
  putBack(jobs: readonly Job[]): void {
    if (jobs.length > this.#head) {
      this.#items = [...jobs, ...this.#items.slice(this.#head)];
      this.#head = 0;
      return;
    }
    this.#head -= jobs.length;
    jobs.forEach((job, i) => {
      this.#items[this.#head + i] = job;
    });
  }

  /** Every job left, and the queue empty. */
  drain(): Job[] {
    return this.take(this.size);
  }
}
