import { stateKey } from '../../src/journal/journal.ts';
import type { Job } from '../../src/batch/plan/jobs.ts';

/** A small inline job for the scheduler's tests: distinct content per n, nothing read from disk. */
export function job(n: number): Job {
  const sha256 = `sha${n}`;
  return {
    ordinal: n,
    input: { path: `/in/${n}.pdf`, realPath: `/in/${n}.pdf`, file: `${n}.pdf`, size: 10, explicit: true },
    sha256,
    mimeType: 'application/pdf',
    key: stateKey(sha256, 't'),
    decision: { route: 'inline', why: 'small' },
    action: 'submit',
    prior: undefined,
  };
}
