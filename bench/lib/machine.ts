import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { availableParallelism } from 'node:os';

/** The machine, for the table's heading: nproc, memory, CPU model, Node version. */
export function describeMachine(): string {
  let model = cpus()[0]?.model ?? 'unknown CPU';
  try {
    model = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? model;
  } catch {
    /* not Linux: os.cpus() said it */
  }
  const gib = (totalmem() / 2 ** 30).toFixed(1);
  return `nproc ${availableParallelism()}, ${gib} GiB memory, ${model}, Node ${process.version}, ${process.platform} ${process.arch}`;
}
