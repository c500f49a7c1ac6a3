import { describe, expect, it } from 'vitest';
import { EXIT_CODES, exitCodeFor } from '../../src/errors.ts';
import { exitCodeOf } from '../../src/batch/summary.ts';

const calm = { stopped_by: null, failed: 0, pending: 0, not_submitted: 0 } as const;

describe('exitCodeOf', () => {
  it('exit code: an output not written is 8, after the stops (130, 4, 3, 7) and before failures and pending (1, 5)', () => {
    expect(exitCodeOf(calm, true)).toBe(EXIT_CODES.output);
    expect(exitCodeOf({ ...calm, failed: 2, pending: 1 }, true)).toBe(EXIT_CODES.output);
    expect(exitCodeOf({ ...calm, stopped_by: 'interrupted' }, true)).toBe(EXIT_CODES.interrupted);
    expect(exitCodeOf({ ...calm, stopped_by: 'unreachable' }, true)).toBe(EXIT_CODES.unreachable);
    expect(exitCodeOf({ ...calm, failed: 2 })).toBe(EXIT_CODES.failed);
    expect(EXIT_CODES.output).toBe(8);
    // Another run holding the journal is not a usage error (2): it has a code of its own.
    expect(EXIT_CODES.locked).toBe(9);
    expect(exitCodeFor('locked')).toBe(9);
    expect(exitCodeFor('usage')).toBe(2);
  });
});
