import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { failsAgain } from '../../src/cost/rerun.ts';
import { KEY } from '../helpers/emulator.ts';
import { batchOptions, invoiceDir, journalFacts, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * New and known failures (README: Exit codes): a file that fails the same way again fails the
 * run that meets it (exit 1) and is listed, set aside, by every later run, which exits 0 on its
 * account and stays quiet under -q. In process, on the harness's fake clock, against the real emulator.
 */

const BROKEN = '%PDF-1.4\nthis is not a PDF at all\n';

describe('new and known failures', () => {
  it('the rule: judged by the service (refused as it is, or ended in error and refunded) fails again; a failure that may pass or may have been charged does not', () => {
    expect(failsAgain({ charge: 'none', retryable: false })).toBe(true);
    expect(failsAgain({ charge: 'refunded', retryable: false })).toBe(true);
    // Refunded at once and may pass (an inline success: false): a plain rerun sends it once more.
    expect(failsAgain({ charge: 'refunded', retryable: true })).toBe(false);
    expect(failsAgain({ charge: 'none', retryable: true })).toBe(false);
    expect(failsAgain({ charge: 'uncertain', retryable: false })).toBe(false);
    expect(failsAgain({ charge: 'uncertain', retryable: true })).toBe(false);
  });

  for (const route of ['inline', 'upload'] as const) {
    it(`${route}: a broken file is exit 1 on the run that meets it, then listed as left and set aside with exit 0; a new failure exits 1 again`, async ({
      emulator,
    }) => {
      const server = await emulator();
      const cwd = await invoiceDir(1);
      writeFileSync(join(cwd, 'in', 'broken.pdf'), BROKEN);
      const options = batchOptions(server.url, KEY, { route, poll: { ...batchOptions('', '').poll, intervalMs: 10 } });

      const first = await run(cwd, ['in/'], options);
      expect(first.summary.exit_code, first.stderr).toBe(1);
      const met = first.summary.documents.find((d) => d.file.endsWith('broken.pdf'));
      expect(met).toMatchObject({ outcome: 'failed', set_aside: true });
      expect(first.summary.known_failures).toBe(0);

      const second = await run(cwd, ['in/'], options);
      expect(second.summary.exit_code, second.stderr).toBe(0);
      expect(second.summary.documents.find((d) => d.file.endsWith('broken.pdf'))).toMatchObject({
        outcome: 'left',
        set_aside: true,
        status: 'error',
      });
      expect(second.summary).toMatchObject({ failed: 1, known_failures: 1 });
      expect(second.stderr).toMatch(/1 failed \(1 known from earlier runs\)/);

      // Quiet with only known failures: nothing on stderr at all.
      const quiet = await run(cwd, ['in/'], { ...options, verbosity: 'quiet' });
      expect(quiet.summary.exit_code).toBe(0);
      expect(quiet.stderr).toBe('');

      // A second bad file is new: the run fails, and says so under -q.
      writeFileSync(join(cwd, 'in', 'broken-too.pdf'), `${BROKEN}% another one\n`);
      const third = await run(cwd, ['in/'], { ...options, verbosity: 'quiet' });
      expect(third.summary.exit_code).toBe(1);
      expect(third.summary).toMatchObject({ failed: 2, known_failures: 1 });
      expect(third.stderr).toMatch(/2 failed \(1 known from earlier runs\)/);

      // --retry-failed still sends a known failure again (a new extract request in the journal), and it fails as new.
      const sent = () =>
        journalFacts(cwd).filter((f) => f.fact === 'sending' && f.file === join('in', 'broken.pdf')).length;
      const before = sent();
      const retried = await run(cwd, ['in/'], { ...options, retryFailed: true });
      expect(sent()).toBe(before + 1);
      expect(retried.summary.exit_code).toBe(1);
      expect(retried.summary.known_failures).toBe(0);
    });
  }

  it('a failure that may pass next time (the service down) is not set aside: retried by the next run', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(1);
    await fetch(`${server.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'extract-inline', probability: 1, effect: { type: 'status', status: 429 } }),
    });
    const first = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(first.summary.exit_code).toBe(1);
    expect(first.summary.documents[0]?.set_aside).toBeUndefined();
    await fetch(`${server.url}/_emulator/faults`, { method: 'DELETE' });
    const second = await run(cwd, ['in/'], batchOptions(server.url, KEY));
    expect(second.summary.exit_code).toBe(0);
    expect(second.summary.documents[0]?.outcome).toBe('completed');
  });
});
