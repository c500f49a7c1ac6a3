import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverInputs } from '../../src/batch/discover/stream.ts';
import { planJobs, serviceName } from '../../src/batch/plan/jobs.ts';
import { openStatCache } from '../../src/batch/plan/stat-cache.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'plan-'));
  mkdirSync(join(dir, 'in', 'sub'), { recursive: true });
  for (let i = 0; i < 40; i++) writeFileSync(join(dir, 'in', i % 2 ? 'sub' : '', `${i}.pdf`), `%PDF-1.4 document ${i}`);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** planJobs over the files of dir/in, nothing known, with the options a test adds. */
async function planIn(options: Partial<Parameters<typeof planJobs>[0]> & { now: () => number }) {
  const { files } = await discoverInputs(['in'], { cwd: dir, ignore: [] });
  return planJobs({
    files,
    known: new Map(),
    target: 't',
    route: 'auto',
    inlineMax: 1000,
    retryFailed: false,
    ...options,
  });
}

async function plan(now: () => number, clock = now) {
  const ticks: Array<[number, number]> = [];
  const at: number[] = [];
  const planned = await planIn({
    now,
    onProgress: (done, total) => {
      ticks.push([done, total]);
      at.push(clock());
    },
  });
  return { planned, ticks, at };
}

describe('planJobs', () => {
  it('tells onRead of each file it reads, and of none the stat cache knows (a rerun keeps V8 defaults)', async () => {
    const cachePath = join(dir, 'cache');
    const planWith = async () => {
      const cache = openStatCache(cachePath);
      let reads = 0;
      const planned = await planIn({
        cache,
        // Long after the files were written: none is racy, every one is cached.
        now: () => Date.now() + 10_000,
        onRead: () => reads++,
      });
      cache.save();
      return { reads, jobs: planned.jobs.length };
    };
    expect(await planWith()).toEqual({ reads: 40, jobs: 40 });
    expect(await planWith()).toEqual({ reads: 0, jobs: 40 });
  });

  it('reports progress at most every 100 ms, and always the last file', async () => {
    const frozen = await plan(() => 1_000);
    expect(frozen.planned.jobs).toHaveLength(40);
    expect(frozen.ticks).toEqual([
      [1, 40],
      [40, 40],
    ]);
    let t = 0;
    const moving = await plan(
      () => (t += 30),
      () => t,
    );
    expect(moving.ticks.length).toBeGreaterThan(2);
    expect(moving.ticks.length).toBeLessThan(40);
    expect(moving.ticks.at(-1)).toEqual([40, 40]);
    // Apart from the last, no two ticks within 100 ms of each other.
    const gaps = moving.at.slice(1, -1).map((x, i) => x - moving.at[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
  });

  it('files of one route share one decision; the service sees the name without folders', async () => {
    const { planned } = await plan(() => 0);
    expect(new Set(planned.jobs.map((j) => j.decision)).size).toBe(1);
    expect(planned.jobs[0]?.decision).toEqual({ route: 'inline', why: 'at most --inline-max (1000 bytes)' });
    expect(planned.jobs.map(serviceName)).toContain('7.pdf');
    expect(planned.jobs.map((j) => j.input.file)).toContain(join('in', 'sub', '7.pdf'));
  });
});
