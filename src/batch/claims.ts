import type { PollPolicy } from '../client/backoff.ts';
import type { Log } from '../client/deps.ts';
import { factKey, type JournalFact, type JournalWriter } from '../journal/journal.ts';
import { replan, type Job } from './plan.ts';
import type { StateJournal } from '../journal/state/index.ts';

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
  /** The documents to submit or resume, one job per content, in input order. */
  jobs: Job[];
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
};

export function workThrough(input: WorkThroughInput): WorkThrough {
  const { state } = input;
  const byKey = new Map(input.jobs.map((j) => [j.key, j]));
  // Jobs this worker holds and has not seen submitted yet (they need a send slot).
  const sending = new Set<string>();
  const running = new Set<Promise<void>>();
  let kick: (() => void) | undefined;
  const wake = (): void => {
    kick?.();
    kick = undefined;
  };

  const journal: JournalWriter = {
    append: async (fact: JournalFact) => {
      await state.append(fact);
      // Any fact after `sending` means the send is over (submitted, completed, failed, unsent).
      const key = fact.fact === 'sending' ? undefined : factKey(fact);
      if (key !== undefined && sending.delete(key)) wake();
    },
    close: () => state.close(),
  };

  const begin = (job: Job): void => {
    if (job.action === 'submit') sending.add(job.key);
    const p = input
      .start(job)
      .catch((err: unknown) => {
        // The journal could not be written (its database gone past the wait): the run stops with that error.
        failure ??= { err };
      })
      .finally(() => {
        sending.delete(job.key);
        running.delete(p);
        // A document lost to another worker (past its lease) is waited for like any held one.
        if (state.lost(job.key)) {
          input.log(
            'warn',
            `${job.input.file}: another worker took it over (this one held it past its lease); not sent from here, waiting for its outcome`,
          );
          waiting.push(job);
        } else
          void state
            .release([job.key])
            .catch((err) =>
              input.log(
                'warn',
                `could not release ${job.input.file} in ${state.where}: ${err instanceof Error ? err.message : String(err)}`,
              ),
            );
        wake();
      });
    running.add(p);
  };

  let queue = new JobQueue(input.jobs);
  let waiting: Job[] = [];
  let failure: { err: unknown } | undefined;
  const rethrow = (): void => {
    if (failure) throw failure.err;
  };

  async function run(): Promise<Array<{ job: Job; holder: string | undefined }>> {
    const shared = state.shared;
    // Jobs are admitted as slots free up, whatever the journal: a batch of N files holds about
    // -c + --max-pending jobs in flight, not N promises queued on the limiters.
    const sendAhead = input.concurrency * 2;
    const maxHeld = input.concurrency + input.maxPending;
    let waitingSince: number | undefined;
    let round = 0;
    let rechecking = false;
    for (;;) {
      for (;;) {
        rethrow();
        if (input.stopped()) {
          // No new claims: the pipeline settles each remaining job as not submitted (or polls
          // one submitted earlier, which costs nothing) without sending anything.
          for (const job of queue.drain()) {
            if (job.action === 'leave') input.decided(job, false);
            else begin(job);
          }
          break;
        }
        const want = Math.min(sendAhead - sending.size, maxHeld - running.size);
        if (queue.size > 0 && want > 0) {
          // One worker is granted every claim: it asks for what it can start. A shared worker asks
          // about more, since other workers may hold some.
          const slice = queue.take(shared ? Math.max(64, want * 4) : want);
          const claims = await state.claim(
            slice.map((j) => j.key),
            want,
          );
          const won = new Set(claims.map((c) => c.key));
          // Documents came free: the others are moving, so look again soon.
          if (rechecking && claims.length > 0) round = 0;
          const kept = claims.length < want ? [] : slice.filter((j) => !won.has(j.key));
          // Fewer than asked: every other document of the slice is held by a live worker.
          if (claims.length < want) waiting.push(...slice.filter((j) => !won.has(j.key)));
          queue.putBack(kept);
          const started: Job[] = [];
          for (const claim of claims) {
            const job = byKey.get(claim.key);
            if (!job) continue;
            if (claim.takenFrom !== null)
              input.log('info', `${job.input.file}: taken over from worker ${claim.takenFrom} (its lease ran out)`);
            // Not kept in byKey: a claim made again (a document waited for) plans again from the
            // claim's answer, so the plan's job will do, and the batch holds one job per document.
            const next = replan(job, claim.known, input.retryFailed, claim.concurrent, input.fresh === true);
            if (next.action === 'submit' || next.action === 'resume') started.push(next);
            else {
              input.decided(next, claim.concurrent);
              void state.release([job.key]).catch(() => undefined);
            }
          }
          // Documents already paid for first: they need no send slot.
          for (const job of started.filter((j) => j.action === 'resume')) begin(job);
          for (const job of started.filter((j) => j.action === 'submit')) begin(job);
          continue;
        }
        if (queue.size === 0 && waiting.length === 0) break;
        if (queue.size === 0) {
          // Only documents other workers hold are left: look again after a poll interval.
          if (waitingSince === undefined) {
            waitingSince = input.deps.now();
            input.log(
              'info',
              `waiting for ${waiting.length} document${waiting.length === 1 ? '' : 's'} other workers hold (up to ${Math.round(input.poll.timeoutMs / 1000)} s, --poll-timeout), to write the whole batch's records`,
            );
          }
          const left = waitingSince + input.poll.timeoutMs - input.deps.now();
          if (left <= 0) break;
          await Promise.race([
            input.deps.sleep(Math.min(heldDelay(round++, input.poll), left), input.signal),
            nextWake(),
          ]);
          if (input.signal.aborted) break;
          queue = new JobQueue(waiting);
          waiting = [];
          rechecking = true;
          continue;
        }
        // Full: wait for a send to end or a document to settle.
        await nextWake();
      }
      // Each job's end wakes this loop. Not Promise.race(running): every race adds a reaction to
      // every job still running, which is quadratic (20,000 documents: 200 million, out of heap).
      const waitingAtEnd = waiting.length;
      while (running.size > 0) {
        await nextWake();
        rethrow();
      }
      // A document lost to another worker while it ran here (this worker paused past its lease)
      // joins `waiting` when its run ends, which may be after the loop above gave up: look at it
      // once more (its new holder may have finished it) before calling it held elsewhere.
      if (waiting.length > waitingAtEnd && !input.stopped() && !input.signal.aborted) {
        queue = new JobQueue(waiting);
        waiting = [];
        rechecking = true;
        continue;
      }
      break;
    }
    if (waiting.length === 0) return [];
    const holders = await state.holders(waiting.map((j) => j.key)).catch(() => new Map<string, string>());
    return waiting.map((job) => ({ job, holder: holders.get(job.key) }));
  }

  /**
   * Another worker's document cannot wake this one (a pooler forbids LISTEN), so it is looked
   * at again soon and then less often: 200 ms, x1.5, up to the poll's longest interval (5 s at most).
   */
  function heldDelay(round: number, poll: PollPolicy): number {
    return Math.min(200 * 1.5 ** round, poll.maxIntervalMs, 5_000);
  }

  function nextWake(): Promise<void> {
    return new Promise((resolve) => {
      const previous = kick;
      kick = () => {
        previous?.();
        resolve();
      };
    });
  }

  return { journal, run };
}

/**
 * The jobs not claimed yet, in order, taken from the front by an index: taking a few and putting
 * back those another worker holds costs what was taken, not a copy of the whole queue (which made
 * a batch of N documents O(N^2): 100,000 documents, some 10^9 copied elements).
 */
export class JobQueue {
  #items: Array<Job | undefined>;
  #head = 0;

  constructor(items: readonly Job[]) {
    this.#items = [...items];
  }

  get size(): number {
    return this.#items.length - this.#head;
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
