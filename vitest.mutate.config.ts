import { defineConfig } from 'vitest/config';

/**
 * The fast unit tests of the failure-cost rules and the journal's replay and lookups, alone:
 * what `npm run mutate` (stryker.config.json) runs against each mutant. In-process, no server,
 * no child process, so a mutant is judged in milliseconds.
 */
export const MUTATION_TESTS = [
  'test/cost/*.test.ts',
  'test/journal/journal.test.ts',
  'test/journal/replay.test.ts',
  'test/journal/identity.test.ts',
  'test/reliability/idempotency-key.test.ts',
];

export default defineConfig({
  test: {
    include: MUTATION_TESTS,
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    isolate: false,
  },
});
