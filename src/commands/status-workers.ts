import type { StatusViewShape } from '../outputs/json-shapes.ts';

/** A worker as `extract status` shows it: who, since when, what it did. */
type StatusWorker = StatusViewShape['workers'][number];

/**
 * The workers people are shown: every live one, and those of the last run (the workers whose
 * time overlaps that of the one started last: the workers of one night start together). A
 * journal used every night for a month would list every worker ever; the rest are counted, and
 * `--json` keeps them all.
 */
function recentWorkers(workers: readonly StatusWorker[]): { shown: StatusWorker[]; earlier: number } {
  const last = workers.reduce<StatusWorker | undefined>(
    (newest, w) => (w.started !== null && (newest === undefined || w.started > newest.started!) ? w : newest),
    undefined,
  );
  const from = last?.started ?? '';
  const shown = workers.filter((w) => w.alive || (last !== undefined && w.started !== null && endOf(w) >= from));
  return { shown, earlier: workers.length - shown.length };
}

/** When a worker was last known to work: its end, else its last sign of life, else its start. */
function endOf(w: StatusWorker): string {
  return w.finished ?? w.last_seen ?? w.started ?? '';
}

/** The workers' lines of `extract status`: one per worker shown, then how many earlier ones are not. */
export function workerLines(workers: readonly StatusWorker[]): string[] {
  if (workers.length === 0) return [];
  const { shown, earlier } = recentWorkers(workers);
  const lines = ['workers (live, and those of the last run):'];
  for (const w of shown) {
    const state = w.finished
      ? `finished ${w.finished}`
      : w.alive
        ? `working, holds ${w.holding}`
        : `gone (last seen ${w.last_seen ?? '?'})`;
    lines.push(`  ${w.id}  ${w.completed} completed, ${w.failed} failed, ${w.pages} pages; ${state}`);
  }
  if (earlier > 0)
    lines.push(
      `  ${earlier} earlier worker${earlier === 1 ? '' : 's'} not shown ("extract status --json" lists every one)`,
    );
  return lines;
}
