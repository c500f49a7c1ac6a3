import { createHook } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { workThrough } from '../../src/batch/send/claims.ts';
import { job } from './jobs.ts';
import { memoryState } from '../../src/journal/state/index.ts';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';

/**
 * The scheduler with the file journal's one worker admits documents as slots free up and waits
 * for them to end. The promises it makes to wait must grow with the documents, not with
 * their square: a run of 20,000 small files ran out of a 4 GB heap on Promise.race.
 */

/** Promises created while `fn` runs (each .then and each await makes one). */
async function promisesMadeBy(fn: () => Promise<void>): Promise<number> {
  let made = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') made++;
    },
  }).enable();
  try {
    await fn();
  } finally {
    hook.disable();
  }
  return made;
}

async function runJobs(n: number): Promise<number> {
  let ended = 0;
  const share = workThrough({
    state: memoryState(),
    jobs: Array.from({ length: n }, (_, i) => job(i)),
    retryFailed: false,
    concurrency: 8,
    maxPending: 100,
    poll: DEFAULT_POLL,
    deps: { now: () => 0, sleep: async () => {} },
    signal: new AbortController().signal,
    stopped: () => false,
    log: () => {},
    // Each document ends on a later turn of the event loop, one after another, as sends do.
    start: () =>
      new Promise<void>((resolve) =>
        setImmediate(() => {
          ended++;
          resolve();
        }),
      ),
    decided: () => {},
  });
  await share.run();
  return ended;
}

describe('workThrough at scale', () => {
  it('promises made per document stay flat from 500 to 4,000 documents', async () => {
    let endedSmall = 0;
    let endedLarge = 0;
    const small = await promisesMadeBy(async () => {
      endedSmall = await runJobs(500);
    });
    const large = await promisesMadeBy(async () => {
      endedLarge = await runJobs(4000);
    });
    expect(endedSmall).toBe(500);
    expect(endedLarge).toBe(4000);
    // Linear: about the same per document. Quadratic (a race over all that run) is ~8x more per document.
    expect(large / 4000, `${small} promises for 500, ${large} for 4,000`).toBeLessThan((small / 500) * 1.5);
  });
});
