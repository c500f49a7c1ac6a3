/**
 * Which vitest project each test file runs in (vitest.config.ts), so that a loaded machine
 * slows the suite down without failing it. test/layers.test.ts checks that every file that
 * starts a process is listed here.
 *
 * - in-process: everything not listed below; servers on 127.0.0.1 port 0 and the engine's own
 *   worker processes included. Three files at a time.
 * - processes: files that start the CLI, `serve` or `listen` as child processes, a browser,
 *   PostgreSQL or npm. They wait on other processes, which a loaded machine slows most: they run
 *   after the in-process files, two at a time, with longer time-outs.
 * - measured: files that read the machine (peak memory, CPU ticks, a deadline in seconds): last,
 *   when the rest of the suite is done.
 */

export const MEASURED = [
  'test/reliability/hostile-bounds.test.ts',
  'test/reliability/hostile-engine.test.ts',
  'test/reliability/hostile-webhooks.test.ts',
  'test/reliability/load.test.ts',
  'test/e2e/batch-cron.test.ts',
  'test/reliability/big-files.test.ts',
  'test/reliability/hostile-wide.test.ts',
  'test/receiver/bounded-memory.test.ts',
  'test/reliability/first-run-memory.test.ts',
];

/** Globs: whole folders of process tests, then the process tests of the other folders. */
export const PROCESSES = [
  'test/e2e/**/*.test.ts',
  'test/app/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/reliability/**/*.test.ts',
  'test/bench/smoke.test.ts',
  'test/docs/docs.test.ts',
  'test/redact.test.ts',
  'test/batch/messages.test.ts',
  'test/batch/one-pass.test.ts',
  'test/journal/journal-compact.test.ts',
  'test/journal/journal-scale.test.ts',
  'test/journal/lock-race.test.ts',
  'test/journal/state-sqlite.test.ts',
  'test/journal/state.test.ts',
  'test/emulator/restart.test.ts',
  'test/emulator/serve-cli.test.ts',
  'test/emulator/webhooks.test.ts',
  'test/receiver/listen-cli.test.ts',
];

/**
 * What marks a file as starting processes (its imports and calls), for test/layers.test.ts.
 * A file that only runs a small tool (mkfifo, sh) may stay in-process: list it in NOT_PROCESSES.
 */
export const STARTS_PROCESSES =
  /spawnCli|spawnServe|spawnNode|from 'execa'|batch-helpers|watch-helpers|helpers\/postgres|\/browser\.ts|node:child_process|reliability\/helpers|receiver\/helpers/;

export const NOT_PROCESSES = [
  // mkfifo only
  'test/outputs/destination.test.ts',
];
