import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { flateBombPdf } from '../helpers/bombs.ts';
import { tempDir, writeJson } from '../helpers/cli.ts';
import { call } from '../helpers/emulator.ts';
import { stored } from '../helpers/hostile.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * `kill -9` of serve (or the OOM killer) must not leave its engine processes reading: before, a
 * process busy in synchronous work (a huge stream's inflate, a long parse) never saw the IPC
 * channel close, nor its own memory check, and read on as an orphan for as long as its document
 * took (measured: 51 s and 18.5 CPU-s after serve had gone).
 */

const LONG = 180_000;
/** The engine process's own watchdog interval (src/engine/worker.ts); the bound below is many of them. */
const WATCHDOG_MS = 250;
/** An orphan must be gone within this: 20 watchdog intervals, far below the reading's tens of seconds. */
const GONE_WITHIN_MS = 20 * WATCHDOG_MS;

function stat(pid: number): string[] | null {
  try {
    // Fields after the command name (which may hold spaces), from its closing parenthesis.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}
/** Live (not zombie) processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((p) => {
      const s = stat(p);
      return s !== null && s[0] !== 'Z' && Number(s[1]) === pid;
    });
}
const alive = (pid: number) => {
  const s = stat(pid);
  return s !== null && s[0] !== 'Z';
};
/** CPU time used so far, in clock ticks (utime + stime). */
const cpuTicks = (pid: number) => {
  const s = stat(pid);
  return s ? Number(s[11]) + Number(s[12]) : 0;
};
/**
 * Busy: 3 CPU-s into the reading (clock ticks of 10 ms), past its start, where pdfjs still yields
 * (before the watchdog, killed at 0.5 CPU-s the process saw its channel close within 52 ms; at
 * 1.5 CPU-s, in 2 runs of 4; at 1.5 and 4 CPU-s otherwise it read on for 23-35 s after serve had gone).
 */
const BUSY_TICKS = 300;
const rssMb = (pid: number) => {
  const s = stat(pid);
  return s ? Math.round((Number(s[21]) * 4096) / 1048576) : 0;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('engine processes do not outlive serve', () => {
  it(
    'after serve is SIGKILLed mid-reading, its engine processes are gone within a few watchdog intervals',
    async ({ spawnServe }) => {
      // 400 MB of path operators, Flate'd twice: tens of seconds of reading, within a raised memory
      // limit so that only time is in question; inflating its content stream is synchronous.
      const slow = await flateBombPdf(400 * 1024 * 1024, 'Invoice Number: INV-SLOW', '0 0 m\n');
      const dir = tempDir();
      const config = writeJson(dir, 'config.json', {
        ...DEFAULT_CONFIG,
        processing: { ms_per_page: 0, concurrency: 1, engine_memory_mb: 4096 },
      });
      const serve = await spawnServe(['--config', config, '--data-dir', join(dir, 'data'), '--no-listen']);
      const servePid = serve.child.pid!;
      const ticket = await stored(serve, slow, 'slow.pdf');
      const r = await call(serve, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
      expect(r.status).toBe(200);
      // Wait until an engine process is busy: its CPU time grows by at least half a second.
      let engines: number[] = [];
      const start = new Map<number, number>();
      const deadline = Date.now() + 60_000;
      for (;;) {
        engines = childrenOf(servePid);
        for (const p of engines) if (!start.has(p)) start.set(p, cpuTicks(p));
        if (engines.some((p) => cpuTicks(p) - start.get(p)! >= BUSY_TICKS)) break;
        expect(Date.now(), 'no engine process started reading').toBeLessThan(deadline);
        await sleep(50);
      }
      expect(engines.length).toBeGreaterThan(0);
      console.log(engines.map((p) => `${p}: ${cpuTicks(p) - start.get(p)!} ticks, ${rssMb(p)} MB`).join('; '));
      serve.child.kill('SIGKILL');
      await serve.child.catch(() => undefined);
      const killedAt = Date.now();
      let left = engines.filter(alive);
      while (left.length > 0 && Date.now() - killedAt < 60_000) {
        await sleep(50);
        left = left.filter(alive);
      }
      const goneAfterMs = Date.now() - killedAt;
      // Clean up whatever outlived the check, so a failure leaves no orphan behind.
      for (const p of left) process.kill(p, 'SIGKILL');
      console.log(`engine processes gone ${goneAfterMs} ms after serve's SIGKILL`);
      expect(goneAfterMs).toBeLessThan(GONE_WITHIN_MS);
    },
    LONG,
  );
});
