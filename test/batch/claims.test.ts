import { describe, expect, it } from 'vitest';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';
import { JobQueue, workThrough } from '../../src/batch/send/claims.ts';
import { Int32List } from '../../src/batch/int32-list.ts';
import { PlanStore, QueuedJobs } from '../../src/batch/plan/planned.ts';
import { knownFromMap, type KnownState } from '../../src/journal/journal.ts';
import { job } from './jobs.ts';
import { memoryState, type Claim, type StateJournal } from '../../src/journal/state/index.ts';

/**
 * The scheduler that feeds the pipeline what this worker holds, over a fake shared journal
 * and a fake clock: claims a little ahead of its sends, waits for documents others hold up to
 * the poll deadline, and takes a finished document's record from the journal.
 */

/** A shared journal where `others` holds some keys until `freeAt` (fake time), then they are completed. */
function fakeShared(others: Map<string, { freeAt: number }>, now: () => number) {
  const held = new Set<string>();
  const claimCalls: number[] = [];
  const state: StateJournal = {
    where: 'fake',
    shared: true,
    worker: 'me',
    replay: async () => ({ known: new Map(), parsers: new Map(), skipped: 0, torn: false }),
    view: async () => ({ known: knownFromMap(new Map()), parsers: new Map(), skipped: 0, torn: false }),
    append: async () => {},
    claim: async (keys, max) => {
      claimCalls.push(max);
      const out: Claim[] = [];
      for (const key of keys) {
        if (out.length >= max) break;
        const other = others.get(key);
        if (held.has(key) || (other && other.freeAt > now())) continue;
        held.add(key);
        const known: KnownState | undefined = other
          ? {
              fact: 'completed',
              at: '',
              sha256: key.split(':')[1]!,
              target: 't',
              file: '',
              route: 'inline',
              document_id: 'doc_o',
              page_count: 1,
              results: {},
            }
          : undefined;
        out.push({ key, known, concurrent: other !== undefined, takenFrom: null });
      }
      return out;
    },
    release: async (keys) => {
      for (const k of keys) held.delete(k);
    },
    lost: () => false,
    holders: async (keys) => new Map(keys.filter((k) => others.has(k)).map((k) => [k, 'worker-b'])),
    history: async () => ({ facts: [], workers: [], skipped: 0 }),
    close: async () => {},
  };
  return { state, held, claimCalls };
}

function fakeClock() {
  let t = 0;
  return {
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
    },
  };
}

describe('claims', () => {
  it('a shared worker holds no more than it can work on: 2 x -c unsent, -c + --max-pending in all', async () => {
    const clock = fakeClock();
    const { state } = fakeShared(new Map(), clock.now);
    const jobs = Array.from({ length: 40 }, (_, i) => job(i));
    let running = 0;
    let most = 0;
    const started: string[] = [];
    const share = workThrough({
      state,
      jobs,
      retryFailed: false,
      concurrency: 2,
      maxPending: 3,
      poll: DEFAULT_POLL,
      deps: clock,
      signal: new AbortController().signal,
      stopped: () => false,
      log: () => {},
      start: async (j) => {
        started.push(j.key);
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 1));
        running--;
      },
      decided: () => {},
    });
    expect(await share.run()).toEqual([]);
    expect(started.sort()).toEqual(jobs.map((j) => j.key).sort()); // each once
    expect(most).toBeLessThanOrEqual(4); // 2 x -c: none of them submitted yet
  });

  it('one worker (file journal, no journal) admits jobs as slots free up: 2 x -c unsent, not the whole batch at once', async () => {
    const jobs = Array.from({ length: 200 }, (_, i) => job(i));
    let running = 0;
    let most = 0;
    const started: string[] = [];
    const share = workThrough({
      state: memoryState(),
      jobs,
      retryFailed: false,
      concurrency: 3,
      maxPending: 10,
      poll: DEFAULT_POLL,
      deps: fakeClock(),
      signal: new AbortController().signal,
      stopped: () => false,
      log: () => {},
      start: async (j) => {
        started.push(j.key);
        most = Math.max(most, ++running);
        await new Promise((r) => setImmediate(r));
        running--;
      },
      decided: () => {},
    });
    expect(await share.run()).toEqual([]);
    // Each once, in input order.
    expect(started).toEqual(jobs.map((j) => j.key));
    expect(most).toBeLessThanOrEqual(6);
  });

  it('a queue over the plan on disk reads each job only when it is taken, and puts back in front of the rest', () => {
    const store = PlanStore.open();
    const jobs = Array.from({ length: 10 }, (_, i) => job(i));
    for (const j of jobs) store.add(j);
    const submit = new Int32List();
    const resume = new Int32List();
    for (const i of [0, 1, 2, 3, 5, 6, 7, 8, 9]) submit.push(i);
    resume.push(4);
    const source = new QueuedJobs(store, [resume, submit]);
    const queue = new JobQueue(source);
    expect(queue.size).toBe(10);
    const first = queue.take(3);
    // Resumed first, then sent, each in input order; read back equal (not the same objects: from disk or memory).
    expect(first).toEqual([jobs[4], jobs[0], jobs[1]]);
    expect(source.size).toBe(7);
    queue.putBack(first.slice(1));
    expect(queue.size).toBe(9);
    expect(queue.drain()).toEqual([jobs[0], jobs[1], jobs[2], jobs[3], ...jobs.slice(5)]);
    expect(queue.size).toBe(0);
    store.close();
  });

  it('the queue of unclaimed jobs: taken from the front, put back in order, drained', () => {
    const jobs = Array.from({ length: 10 }, (_, i) => job(i));
    const queue = new JobQueue(jobs);
    const first = queue.take(4);
    expect(first).toEqual(jobs.slice(0, 4));
    queue.putBack(first.slice(2));
    expect(queue.size).toBe(8);
    expect(queue.take(3)).toEqual(jobs.slice(2, 5));
    queue.putBack([jobs[9]!, jobs[0]!, jobs[1]!, jobs[2]!]); // more than was taken last: still in front, in order
    expect(queue.drain()).toEqual([jobs[9], jobs[0], jobs[1], jobs[2], ...jobs.slice(5)]);
    expect(queue.size).toBe(0);
    expect(queue.take(5)).toEqual([]);
  });

  it('documents another live worker holds are waited for, and their outcome taken from the journal once free', async () => {
    const clock = fakeClock();
    const others = new Map([[job(1).key, { freeAt: 3_000 }]]);
    const { state } = fakeShared(others, clock.now);
    const decided: Array<{ key: string; concurrent: boolean; action: string }> = [];
    const started: string[] = [];
    const share = workThrough({
      state,
      jobs: [job(0), job(1), job(2)],
      retryFailed: true,
      concurrency: 1,
      maxPending: 1,
      poll: DEFAULT_POLL,
      deps: clock,
      signal: new AbortController().signal,
      stopped: () => false,
      log: () => {},
      start: async (j) => void started.push(j.key),
      decided: (j, concurrent) => decided.push({ key: j.key, concurrent, action: j.action }),
    });
    expect(await share.run()).toEqual([]);
    expect(started.sort()).toEqual([job(0).key, job(2).key]);
    // Completed by the other worker during this batch: not sent again, even with --retry-failed.
    expect(decided).toEqual([{ key: job(1).key, concurrent: true, action: 'done' }]);
    expect(clock.now()).toBeGreaterThanOrEqual(3_000);
    expect(clock.now()).toBeLessThan(3_000 + 5_000); // looked again within the longest wait
  });

  it('a document held past the poll deadline is handed back as held, naming its holder', async () => {
    const clock = fakeClock();
    const others = new Map([[job(1).key, { freeAt: Infinity }]]);
    const { state } = fakeShared(others, clock.now);
    const share = workThrough({
      state,
      jobs: [job(0), job(1)],
      retryFailed: false,
      concurrency: 1,
      maxPending: 1,
      poll: { ...DEFAULT_POLL, timeoutMs: 60_000 },
      deps: clock,
      signal: new AbortController().signal,
      stopped: () => false,
      log: () => {},
      start: async () => {},
      decided: () => {},
    });
    const held = await share.run();
    expect(held.map((h) => [h.job.key, h.holder])).toEqual([[job(1).key, 'worker-b']]);
    expect(clock.now()).toBeGreaterThanOrEqual(60_000);
    expect(clock.now()).toBeLessThan(70_000);
  });
  it('a document lost to another worker while it ran here, found after the claims ended, is looked at again: done by the other, it is not called held', async () => {
    const clock = fakeClock();
    const others = new Map<string, { freeAt: number }>();
    const { state, held } = fakeShared(others, clock.now);
    let lost = false;
    state.lost = (key) => lost && key === job(0).key;
    let finish: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const decided: Array<{ key: string; action: string }> = [];
    const share = workThrough({
      state,
      jobs: [job(0)],
      retryFailed: false,
      concurrency: 1,
      maxPending: 1,
      poll: DEFAULT_POLL,
      deps: clock,
      signal: new AbortController().signal,
      stopped: () => false,
      log: () => {},
      start: () => running,
      decided: (j) => decided.push({ key: j.key, action: j.action }),
    });
    const result = share.run();
    // This worker paused past its lease: the other took the document over and completed it.
    setTimeout(() => {
      lost = true;
      held.delete(job(0).key);
      others.set(job(0).key, { freeAt: 0 });
      finish();
    }, 20);
    expect(await result).toEqual([]);
    expect(decided).toEqual([{ key: job(0).key, action: 'done' }]);
  });
});
