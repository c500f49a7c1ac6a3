import { availableParallelism, type CpuInfo, cpus } from 'node:os';

/**
 * Which vitest project each test file runs in (vitest.config.ts), so that a loaded machine
 * slows the suite down without failing it. test/layers.test.ts checks that every file that
 * starts a process is listed here.
 *
 * - in-process: everything not listed below; servers on 127.0.0.1 port 0 and the engine's own
 *   worker processes included. Three files at a time.
 * - processes: files that start the CLI, `serve` or `listen` as child processes, a browser,
 *   PostgreSQL or npm. They wait on other processes, which a loaded machine slows most: longer
 *   time-outs, and on a busy machine they run after the in-process files, two at a time
 *   (processWorkersFor).
 * - measured: files that read the machine (peak memory, CPU ticks, a deadline in seconds): last,
 *   when the rest of the suite is done.
 */

/** Three at a time: the engine's and OCR's CPU keep both cores busy, the servers' waits fill the gaps. */
export const IN_PROCESS_WORKERS = 3;

/**
 * How many process-test files run at once. On a quiet machine, 3, in one pool with the
 * in-process files (the suite is CPU-bound: no turn then waits on another turn's tail). On a
 * machine already busy when the suite starts (another build, another copy of the suite: half its
 * cores or more busy), 2, after the in-process files, so fewer processes wait on a core at once.
 * EXTRACT_TEST_PROCESS_WORKERS chooses instead: 1 (one at a time), 2 or 3.
 *
 * busy: how many cores' worth of work the machine is doing now (busyCores). Not the load
 * average: `npm test` type-checks and lints just before vitest starts, and the 1-minute average
 * still counted that work, so a quiet CI machine ran the slower layout every time.
 */
export function processWorkersFor(
  env: NodeJS.ProcessEnv,
  busy: number,
  cores: number = availableParallelism(),
): number {
  const chosen = chosenWorkers(env);
  if (chosen !== undefined) return chosen;
  return busy >= cores / 2 ? 2 : IN_PROCESS_WORKERS;
}

function chosenWorkers(env: NodeJS.ProcessEnv): number | undefined {
  const chosen = Number(env.EXTRACT_TEST_PROCESS_WORKERS);
  return Number.isInteger(chosen) && chosen >= 1 && chosen <= IN_PROCESS_WORKERS ? chosen : undefined;
}

/** The cores' busy time over `ms` (from the kernel's per-core counters), in cores. */
export async function busyCores(ms = 500, sample: () => CpuInfo[] = cpus): Promise<number> {
  const before = sample();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = sample();
  let busy = 0;
  let total = 0;
  after.forEach((cpu, i) => {
    const was = before[i]?.times;
    if (!was) return;
    const spent = Object.values(cpu.times).reduce((a, b) => a + b, 0) - Object.values(was).reduce((a, b) => a + b, 0);
    total += spent;
    busy += spent - (cpu.times.idle - was.idle);
  });
  return total > 0 ? (busy / total) * after.length : 0;
}

/** The layout for this run: sampled only when EXTRACT_TEST_PROCESS_WORKERS does not choose. */
export async function processWorkersNow(
  env: NodeJS.ProcessEnv = process.env,
  busy: () => Promise<number> = busyCores,
): Promise<number> {
  return chosenWorkers(env) ?? processWorkersFor(env, await busy());
}

export const MEASURED = [
  'test/reliability/hostile-bounds.test.ts',
  'test/reliability/hostile-engine.test.ts',
  'test/reliability/hostile-webhooks.test.ts',
  'test/reliability/load.test.ts',
  'test/e2e/batch-cron.test.ts',
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
  'test/docs/recipes.test.ts',
  'test/redact.test.ts',
  'test/batch/messages.test.ts',
  'test/batch/one-pass.test.ts',
  'test/journal/journal-compact.test.ts',
  'test/journal/journal-scale.test.ts',
  'test/journal/lock-race.test.ts',
  'test/journal/state-postgres-upgrade.test.ts',
  'test/journal/state-sqlite.test.ts',
  'test/journal/state.test.ts',
  'test/emulator/restart.test.ts',
  'test/emulator/serve-cli.test.ts',
  'test/emulator/webhooks.test.ts',
  'test/receiver/listen-cli.test.ts',
  'test/receiver/append-only.test.ts',
  'test/engine/kills.test.ts',
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
  // qpdf only (an encrypted fixture)
  'test/pdf/cut.test.ts',
  // tar(1) only, to make real tar archives
  'test/inputs/archives.test.ts',
];
