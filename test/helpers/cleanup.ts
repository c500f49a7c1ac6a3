import { onTestFinished } from 'vitest';

/**
 * Clean-up that helpers register once, run by test/setup.ts after every test (and after every
 * file) of every test file. A helper's own top-level afterEach would attach only to the first
 * file that imports it when files share a worker (isolate: false), and leak from then on.
 */
type Cleanup = () => unknown;

const eachTest = new Set<Cleanup>();
const eachFile = new Set<Cleanup>();

/** `fn` runs after each test, once however many files import the helper that registers it. */
export function afterEachTest(fn: Cleanup): void {
  eachTest.add(fn);
}

/** `fn` runs after each test file's last test. */
export function afterEachFile(fn: Cleanup): void {
  eachFile.add(fn);
}

/** Runs them all at once, each even if another fails; then throws the first failure. */
async function runAll(fns: Set<Cleanup>): Promise<void> {
  const results = await Promise.allSettled([...fns].map(async (fn) => fn()));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

export const runTestCleanups = (): Promise<void> => runAll(eachTest);
export const runFileCleanups = (): Promise<void> => runAll(eachFile);

/** Whether this runs inside a test (onTestFinished throws outside one: in beforeAll, at a file's top level). */
export function inTest(): boolean {
  try {
    onTestFinished(() => undefined);
    return true;
  } catch {
    return false;
  }
}
