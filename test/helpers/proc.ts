import { readdirSync, readFileSync } from 'node:fs';

/**
 * What tests read of a process in /proc (Linux): the processes it started, and its CPU time.
 * Each answers as if the process had none (or null) once it has ended, or where /proc is not there.
 */

/** The processes `pid` started, from each of its threads' lists of children (no walk of all of /proc). */
export function childrenOf(pid: number | 'self'): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
      try {
        return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
      } catch {
        return []; // the thread ended meanwhile
      }
    });
  } catch {
    return []; // ended already
  }
}

/** CPU time in clock ticks (1/100 s): the process's own (utime + stime) and its waited-for children's (cutime + cstime). */
export type CpuTicks = { self: number; children: number };

export function cpuTicksOf(pid: number | 'self'): CpuTicks | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const at = (i: number) => Number(fields[i]) || 0;
    return { self: at(11) + at(12), children: at(13) + at(14) };
  } catch {
    return null;
  }
}
