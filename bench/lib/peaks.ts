import { readFileSync } from 'node:fs';
import { childrenOf } from '../../test/helpers/proc.ts';

function vmHwmMb(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null; // gone meanwhile
  }
}

/** Samples the peak of `pid` and of each of its descendants; `stop` returns serve's peak plus theirs. */
export function peakSampler(pid: number): { stop: () => { serveMb: number; descendantsMb: number } } {
  const peaks = new Map<number, number>();
  const sample = (): void => {
    const todo = [pid];
    while (todo.length > 0) {
      const p = todo.pop()!;
      const mb = vmHwmMb(p);
      if (mb !== null) peaks.set(p, Math.max(peaks.get(p) ?? 0, mb));
      todo.push(...childrenOf(p));
    }
  };
  const timer = setInterval(sample, 200);
  return {
    stop() {
      clearInterval(timer);
      sample();
      let descendantsMb = 0;
      for (const [p, mb] of peaks) if (p !== pid) descendantsMb += mb;
      return { serveMb: peaks.get(pid) ?? 0, descendantsMb };
    },
  };
}
