import { describe, expect, it } from 'vitest';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { EnginePool, EngineError, slowToStop } from '../../src/engine/index.ts';
import { flateBombPdf } from '../helpers/bombs.ts';
import { invoicePdf } from '../helpers/pdf.ts';

/**
 * The engine's pool (issue 25 item 1): documents are read in child processes that the pool kills
 * at a resident-memory limit, and documents that read for long never hold every process while
 * fresh ones wait.
 */

const settled = <T>(p: Promise<T>) => {
  const state = { done: false };
  void p.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  return state;
};

describe('engine pool', () => {
  it('fairness: slow readings beyond size - 1 are stopped, the longest-running first; none while size - 1 or fewer are slow', () => {
    const at = (...starts: number[]) => starts.map((startedAt) => ({ startedAt }));
    expect(slowToStop(at(5, 1, 3), 2)).toEqual(at(1, 3));
    expect(slowToStop(at(5, 1, 3), 3)).toEqual(at(1));
    expect(slowToStop(at(5, 1), 3)).toEqual([]);
    expect(slowToStop(at(7), 1)).toEqual(at(7));
    expect(slowToStop([], 1)).toEqual([]);
  });

  it('a fresh document is read while two slow ones hold both processes: the slowest is stopped and read again after', async () => {
    // 40 MB of path operators, Flate'd twice: seconds of reading each (about five times what the
    // honest document needs with its process's start, 3 s against 15 at load 15; 120 MB read each of
    // the three times for 20-60 s).
    const slow = await flateBombPdf(40 * 1024 * 1024, 'Invoice Number: INV-SLOW', '0 0 m\n');
    const honestPdf = await invoicePdf(11);
    // The fairness rule's clock moves slowMs each time it is read: each reading has been slow since the
    // next one started, without a real wait (which both spent reading on both cores).
    let ms = 0;
    const engine = new EnginePool({ workers: 2, slowMs: 300, now: () => (ms += 300) });
    try {
      const job = (bytes: Buffer) => engine.extract({ bytes, mimeType: 'application/pdf', fields: INVOICE_FIELDS });
      const a = job(slow);
      const b = job(slow);
      const aDone = settled(a);
      const bDone = settled(b);
      // Both are being read, past slowMs, when the honest document arrives.
      await new Promise((res) => setImmediate(res));
      const honest = await job(honestPdf);
      expect(honest.results.invoice_number).toMatch(/^INV-0*11$/);
      // Read beside them: neither slow document had finished.
      expect(aDone.done || bDone.done).toBe(false);
      // The one stopped for it is read again later, from the start, and both still complete.
      const [outA, outB] = await Promise.all([a, b]);
      expect(outA.results.invoice_number).toBe('INV-SLOW');
      expect(outB.results.invoice_number).toBe('INV-SLOW');
    } finally {
      await engine.close();
    }
  }, 180_000);

  it('a process past its memory limit is killed and the document refused as too_large; the next document is read', async () => {
    const bomb = await flateBombPdf(1024 * 1024 * 1024);
    const engine = new EnginePool({ workers: 1, memoryMb: 200 });
    try {
      const err = await engine
        .extract({ bytes: bomb, mimeType: 'application/pdf', fields: INVOICE_FIELDS })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'too_large' });
      expect((err as Error).message).toContain('(200 MB per engine process)');
      const out = await engine.extract({
        bytes: await invoicePdf(12),
        mimeType: 'application/pdf',
        fields: INVOICE_FIELDS,
      });
      expect(out.results.invoice_number).toMatch(/^INV-0*12$/);
    } finally {
      await engine.close();
    }
  }, 120_000);

  it('close() ends a read in progress at once', async () => {
    const bomb = await flateBombPdf(1024 * 1024 * 1024);
    const engine = new EnginePool({ workers: 1 });
    const reading = engine.extract({ bytes: bomb, mimeType: 'application/pdf', fields: INVOICE_FIELDS });
    const outcome = reading.catch((e: unknown) => e);
    await new Promise((res) => setTimeout(res, 2000));
    await engine.close();
    expect(await outcome).toMatchObject({ name: 'EngineClosedError' });
  }, 60_000);
});
