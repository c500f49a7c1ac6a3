import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { IN_PROCESS_WORKERS } from './layers.ts';

/**
 * After a run, the ten test files that took longest (their tests and hooks), for whoever wants
 * the suite faster or wonders why it is slow on their machine. Written to stdout, after vitest's
 * own summary.
 */
export default class SlowestFiles implements Reporter {
  readonly #processWorkers: number;

  /** processWorkers: how many process-test files ran at once (test/layers.ts processWorkersFor). */
  constructor(options: { processWorkers: number }) {
    this.#processWorkers = options.processWorkers;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => ({ file: relative(process.cwd(), m.moduleId), ms: m.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10);
    if (rows.length === 0) return;
    const lines = rows.map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(6)} s  ${r.file}`);
    const layout =
      this.#processWorkers === IN_PROCESS_WORKERS
        ? `process tests ${this.#processWorkers} at a time, in one pool with the in-process files`
        : `process tests ${this.#processWorkers} at a time, after the in-process files`;
    process.stdout.write(`\nSlowest ${rows.length} test files (${layout}):\n${lines.join('\n')}\n`);
  }
}
