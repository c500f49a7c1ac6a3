import { writeSync } from 'node:fs';
import fc from 'fast-check';
import { MockAgent } from 'undici';
import { describe, expect, onTestFinished } from 'vitest';
import type { WriteBytes } from '../../src/journal/journal.ts';
import { KEY } from '../helpers/emulator.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Pages charged are what the service charged: a document the service answers with again (a
 * resend under the same Idempotency-Key, which the emulator answers with its first document)
 * is recognised, not counted twice; summed over any runs of a batch, the pages charged are the
 * emulator's ledger. The emulator honours Idempotency-Key here (its default), as a service
 * that recognises a request it has seen does.
 */

/** fs.writeSync for `n` writes, then ENOSPC for every later one: the journal's disk is full. */
function diskFullAfter(n: number): WriteBytes {
  let calls = 0;
  return (fd, bytes, offset, length) => {
    if (++calls > n) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    return writeSync(fd, bytes, offset, length);
  };
}

async function setFault(url: string, rule: unknown | null): Promise<void> {
  await fetch(`${url}/_emulator/faults`, { method: 'DELETE' });
  if (rule === null) return;
  const res = await fetch(`${url}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  expect(res.status).toBe(200);
}

describe('pages charged are what the service charged', () => {
  it('--fresh answered with the same documents: nothing charged, their pages recognised; the sum is the ledger', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(3, 2);
    const options = batchOptions(server.url, KEY, { route: 'inline' });
    const first = await run(cwd, ['in/'], options);
    expect(first.summary.pages_charged).toBe(6);
    const fresh = await run(cwd, ['in/'], { ...options, fresh: true });
    expect(fresh.summary.completed, fresh.stderr).toBe(3);
    expect((await ledgerTotals(server.url)).net).toBe(6);
    expect(fresh.summary.pages_charged).toBe(0);
    expect(fresh.summary.pages_recognised).toBe(6);
    expect(fresh.stderr).toMatch(/; 0 pages charged, 6 recognised \(no charge\) in /);
  });

  it('a service that makes a new document for each request: --fresh charges again, and says so', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(2, 2);
    const options = batchOptions(server.url, KEY, { route: 'inline' });
    const first = await run(cwd, ['in/'], options);
    const fresh = await run(cwd, ['in/'], { ...options, fresh: true });
    expect(fresh.summary.pages_charged).toBe(4);
    expect(fresh.summary.pages_recognised).toBe(0);
    expect(first.summary.pages_charged + fresh.summary.pages_charged).toBe((await ledgerTotals(server.url)).net);
  });

  it('an answer refused that named its document and pages: --retry-failed fetches it by its id and does not count it again', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    onTestFinished(() => agent.close());
    const base = 'http://service.test';
    // Results nested deeper than any document needs: the client refuses the answer, which names its document and pages.
    const deep = `${'{"a":'.repeat(100)}null${'}'.repeat(100)}`;
    agent
      .get(base)
      .intercept({ path: '/api/v1/extract', method: 'POST' })
      .reply(200, `{"success":true,"parser_id":"p","document_id":"doc_9","page_count":2,"results":${deep}}`);
    agent
      .get(base)
      .intercept({ path: '/api/v1/documents/doc_9', method: 'GET' })
      .reply(200, '{"document_id":"doc_9","status":"completed","file_name":"doc-00.pdf","page_count":2,"results":{}}')
      .persist();
    const cwd = await invoiceDir(1, 2);
    const options = batchOptions(base, KEY, { route: 'inline' });
    const first = await run(cwd, ['in/'], options, { dispatcher: agent });
    expect(first.summary.failed, first.stderr).toBe(1);
    expect(first.summary.pages_charged).toBe(2);
    const retried = await run(cwd, ['in/'], { ...options, retryFailed: true }, { dispatcher: agent });
    expect(retried.summary.completed, retried.stderr).toBe(1);
    expect(retried.summary.pages_charged).toBe(0);
  });

  /**
   * A run of the sequence: a plain rerun, --fresh, --retry-failed, each possibly under a fault
   * of POST extract: `reset-after` (the service did the work and charged, the answer was lost),
   * `502` (a proxy answered: nothing happened, the client cannot know), or the journal's disk
   * full after its first writes (what the run learns waits in the rescue file).
   */
  const Step = fc.record({
    how: fc.constantFrom('plain', 'fresh', 'retry-failed'),
    fault: fc.constantFrom('none', 'none', 'reset-after', '502', 'disk-full'),
  });

  it('summed over any sequence of runs (first, rerun, --fresh, --retry-failed, answers lost), pages charged are the ledger', async ({
    emulator,
  }) => {
    const seen: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('inline', 'upload'),
        fc.boolean(),
        fc.array(Step, { minLength: 2, maxLength: 4 }),
        async (route, honoured, steps) => {
          seen.length = 0;
          // Closed after the test (test/helpers/emulator.ts).
          const server = await emulator({ idempotency_key: honoured });
          const cwd = await invoiceDir(2, 2);
          const options = batchOptions(server.url, KEY, { route: route as 'inline' | 'upload' });
          const operation = route === 'inline' ? 'extract-inline' : 'extract-async';
          let sum = 0;
          let lost = false;
          for (const drawn of [{ how: 'plain', fault: 'none' }, ...steps]) {
            // --fresh by upload is a new upload under a new key: it gives up an answer an earlier run
            // lost (counted as unknown there), which --retry-failed would have taken. Settled first.
            // A service that ignores the key charges a resend of a lost answer again, which no
            // run can count (the lost answer's pages are unknown): answers are lost only to one that honours it.
            const kept = honoured || drawn.fault !== 'reset-after' ? drawn : { ...drawn, fault: 'none' };
            const step: { how: string; fault: string } =
              lost && route === 'upload' && kept.how === 'fresh' ? { ...kept, how: 'retry-failed' } : kept;
            lost = step.fault === 'reset-after' || (lost && step.how !== 'retry-failed');
            await setFault(
              server.url,
              step.fault === 'none' || step.fault === 'disk-full'
                ? null
                : {
                    operation,
                    probability: 1,
                    effect: step.fault === '502' ? { type: 'status', status: 502 } : { type: 'reset', when: 'after' },
                  },
            );
            const r = await run(
              cwd,
              ['in/'],
              { ...options, fresh: step.how === 'fresh', retryFailed: step.how === 'retry-failed' },
              step.fault === 'disk-full' ? { writeJournal: diskFullAfter(2) } : {},
            );
            sum += r.summary.pages_charged;
            seen.push(
              `${route}${honoured ? '' : ' (key ignored)'} ${step.how}/${step.fault}: ${r.summary.pages_charged}+${r.summary.pages_recognised}`,
            );
          }
          // Every answer the last runs lost is taken: a --retry-failed with no fault.
          await setFault(server.url, null);
          sum += (await run(cwd, ['in/'], { ...options, retryFailed: true })).summary.pages_charged;
          expect(sum, seen.join('\n')).toBe((await ledgerTotals(server.url)).net);
        },
      ),
      { numRuns: 10, seed: 40, endOnFailure: true },
    );
  });
});
