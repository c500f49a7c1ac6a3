/**
 * Which vitest project a test file runs in is its name (vitest.config.ts):
 *
 * - `*.test.ts`, in-process: logic, servers on 127.0.0.1 port 0, the engine's own worker
 *   processes. Three files at a time.
 * - `*.proc.test.ts`, processes: files that start the CLI, `serve` or `listen` as child
 *   processes, a browser, PostgreSQL or npm. They wait on other processes, which a loaded machine
 *   slows most: longer time-outs, and fewer at a time, after the in-process files
 *   (processWorkersFor).
 *
 * test/layers.test.ts reads each file's imports and calls (STARTS_PROCESSES) and fails when a file
 * that starts processes is not named `.proc.test.ts`.
 */
export const PROC_SUFFIX = '.proc.test.ts';

/** Three at a time: the engine's and OCR's CPU keep both cores busy, the servers' waits fill the gaps. */
export const IN_PROCESS_WORKERS = 3;

/**
 * How many process-test files run at once: 2, after the in-process files, so that a machine
 * already busy (another build, another copy of the suite) has fewer processes waiting on a core
 * at once. EXTRACT_TEST_PROCESS_WORKERS chooses instead: 1 (one at a time), 2, or 3 (in one pool
 * with the in-process files: vitest shares a turn between projects only when they run as many
 * files at a time; the quickest on a quiet machine).
 */
export function processWorkersFor(env: NodeJS.ProcessEnv): number {
  const chosen = Number(env.EXTRACT_TEST_PROCESS_WORKERS);
  return Number.isInteger(chosen) && chosen >= 1 && chosen <= IN_PROCESS_WORKERS ? chosen : 2;
}

/** What marks a file as starting processes (its imports and calls), for test/layers.test.ts. */
export const STARTS_PROCESSES =
  /spawnCli|spawnServe|spawnNode|from 'execa'|batch-helpers|watch-helpers|helpers\/postgres|\/browser\.ts|node:child_process|reliability\/helpers|receiver\/helpers/;
