import { mkdirSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import type { CpuTicks } from './helpers/proc.ts';
import { IN_PROCESS_WORKERS } from './layers.ts';

/** Where test/setup.ts records a file's CPU (CpuTicks) in the file's meta. */
export const cpuTicksKey = 'cpuTicks';

/**
 * After a run, the ten test files that cost most, for whoever wants the suite faster or wonders
 * why it is slow on their machine. Ranked by CPU-seconds (the file's worker and the processes
 * it started and waited for) where /proc gives them, since the suite is CPU-bound on 2 cores and
 * a file's wall time counts the files running beside it; by wall time elsewhere. Written to
 * stdout, after vitest's own summary.
 */
export default class SlowestFiles implements Reporter {
  readonly #processWorkers: number;

  /** processWorkers: how many process-test files ran at once (test/layers.ts processWorkersFor). */
  constructor(options: { processWorkers: number }) {
    this.#processWorkers = options.processWorkers;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const all = modules.map((m) => {
      const ticks = (m.meta() as Record<string, unknown>)[cpuTicksKey] as CpuTicks | undefined;
      return {
        file: relative(process.cwd(), m.moduleId),
        wall: m.diagnostic().duration / 1000,
        cpu: ticks ? (ticks.self + ticks.children) / 100 : undefined,
        // Its worker's own part: the in-process work (tests, in-process servers), against its children's.
        self: ticks ? ticks.self / 100 : undefined,
      };
    });
    if (all.length === 0) return;
    const byCpu = all.every((r) => r.cpu !== undefined);
    const rows = [...all].sort((a, b) => (byCpu ? b.cpu! - a.cpu! : b.wall - a.wall)).slice(0, 10);
    const cell = (s: number) => `${s.toFixed(1).padStart(6)} s`;
    const lines = rows.map(
      (r) => `  ${byCpu ? `${r.cpu!.toFixed(1).padStart(6)} CPU-s` : ''}${cell(r.wall)}  ${r.file}`,
    );
    const layout =
      this.#processWorkers === IN_PROCESS_WORKERS
        ? `process tests ${this.#processWorkers} at a time, in one pool with the in-process files`
        : `process tests ${this.#processWorkers} at a time, after the in-process files`;
    const heading = byCpu
      ? `Costliest ${rows.length} test files by CPU-seconds, then their wall time (${layout});` +
        ` all files ${all.reduce((s, r) => s + r.cpu!, 0).toFixed(0)} CPU-s, vitest itself ${vitestCpuSeconds().toFixed(0)} CPU-s:`
      : `Slowest ${rows.length} test files (${layout}):`;
    process.stdout.write(`\n${heading}\n${lines.join('\n')}\n`);
    // Every file's figures, for comparing two runs file by file.
    mkdirSync('test-output', { recursive: true });
    writeFileSync('test-output/file-costs.json', `${JSON.stringify(all, null, 1)}\n`);
  }
}

function vitestCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
