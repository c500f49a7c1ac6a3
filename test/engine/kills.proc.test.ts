import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { EngineError, EnginePool, MAX_KILLS, residentMb } from '../../src/engine/index.ts';
import { flateBombPdf } from '../helpers/bombs.ts';
import { invoicePdf } from '../helpers/pdf.ts';

/**
 * An engine process killed by a signal it did not earn (an operator's kill -9, a supervisor, the
 * system's OOM killer on behalf of another program) says nothing about the document: it is read
 * again, and only a document whose processes keep being killed is refused. The memory watchdog's
 * own kill stays "too large" (test/engine/pool.test.ts).
 */

/** The processes whose parent is this one and that still run (a zombie has ended). */
function children(): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, 'utf8');
    } catch {
      continue;
    }
    if (Number(/PPid:\s+(\d+)/.exec(status)?.[1]) === process.pid && !/State:\s+Z/.test(status)) out.push(Number(name));
  }
  return out;
}

/** The one engine process not in `before`, once it runs. */
async function reader(before: ReadonlySet<number>): Promise<number> {
  await expect.poll(() => children().filter((p) => !before.has(p)), { interval: 5 }).toHaveLength(1);
  return children().find((p) => !before.has(p))!;
}

describe('engine pool: kills from outside', () => {
  it('a document whose process is SIGKILLed from outside while it reads is read again and completes', async () => {
    const engine = new EnginePool({ workers: 1 });
    try {
      const before = new Set(children());
      const reading = engine.extract({
        bytes: await invoicePdf(7),
        mimeType: 'application/pdf',
        fields: INVOICE_FIELDS,
      });
      const outcome = reading.catch((e: unknown) => e);
      // Killed as soon as it exists: the document was handed to it before extract() yielded, and a
      // new process loads the engine before it can answer.
      process.kill(await reader(before), 'SIGKILL');
      const out = await outcome;
      expect(out, String(out)).not.toBeInstanceOf(Error);
      expect((out as Awaited<typeof reading>).results.invoice_number).toMatch(/^INV-0*7$/);
    } finally {
      await engine.close();
    }
  }, 120_000);

  it(`a document whose processes are killed ${MAX_KILLS} times is refused, saying so, not called too large for memory`, async () => {
    // A bomb keeps each process busy long enough to be killed mid-read (its memory well under the limit).
    const bomb = await flateBombPdf(512 * 1024 * 1024);
    const engine = new EnginePool({ workers: 1, memoryMb: 4096 });
    try {
      const outcome = engine
        .extract({ bytes: bomb, mimeType: 'application/pdf', fields: INVOICE_FIELDS })
        .catch((e: unknown) => e);
      const seen = new Set(children());
      for (let kill = 0; kill < MAX_KILLS; kill++) {
        const pid = await reader(seen);
        seen.add(pid);
        await expect.poll(() => residentMb(pid) ?? 0, { timeout: 60_000, interval: 20 }).toBeGreaterThan(150);
        process.kill(pid, 'SIGKILL');
      }
      const err = await outcome;
      expect(err, String(err)).toBeInstanceOf(EngineError);
      expect((err as Error).message).toContain(`killed ${MAX_KILLS} times (signal SIGKILL)`);
      expect((err as Error).message).not.toContain('needs more memory than the engine allows');
    } finally {
      await engine.close();
    }
  }, 180_000);
});
