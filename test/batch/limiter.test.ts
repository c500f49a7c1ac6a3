import { describe, expect, it } from 'vitest';
import { Limiter } from '../../src/batch/send/limiter.ts';

describe('limiter (AIMD)', () => {
  it('halves on 429 once per quiet period, climbs by one after a window of successes', () => {
    let t = 0;
    const l = new Limiter(8, { now: () => t, quietMs: 1000 });
    l.rateLimited();
    l.rateLimited(); // same burst
    expect(l.limit).toBe(4);
    t += 1500;
    l.rateLimited();
    expect(l.limit).toBe(2);
    for (let i = 0; i < 2; i++) l.succeeded();
    expect(l.limit).toBe(3);
    for (let i = 0; i < 100; i++) l.succeeded();
    expect(l.limit).toBe(8);
  });
  it('never lets more than the limit run', async () => {
    const l = new Limiter(2);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        const release = await l.acquire();
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 2));
        running--;
        release();
      }),
    );
    expect(peak).toBe(2);
    expect(l.active).toBe(0);
  });
});
