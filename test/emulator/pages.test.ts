import { describe, expect, it } from 'vitest';
import type { Engine, EngineCallOptions } from '../../src/engine/types.ts';
import { GatewayError } from '../../src/emulator/errors.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../src/engine/types.ts';
import { createPageCounter, TRUNCATED_PDF } from '../../src/emulator/pages.ts';
import { invoicePdf } from '../helpers/pdf.ts';

/**
 * Page counting's own deadline, in process: an engine that counts until it is stopped (a bomb in
 * the cross-reference stream) is stopped there on every route, and the document refused as
 * unreadable; an inline request's own deadline is its own, not reworded as this one.
 * (test/reliability/hostile-bounds.proc.test.ts sends real bombs; there the engine's memory limit ends them first.)
 */

/** Counts until its signal aborts, then fails as a stopped engine call does. */
const endless = {
  countPages: (_bytes: unknown, _mime: string, options?: EngineCallOptions) =>
    new Promise<number>((_resolve, reject) => {
      const signal = options?.signal;
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    }),
} as unknown as Engine;

describe('page counting is bounded', () => {
  it('counting past the deadline is an unreadable document that names the deadline', async () => {
    const count = createPageCounter(endless, { limitMs: 50 });
    // Ended by its 50 ms, not by some later limit: a hundred times it is the most it may take.
    const stillCounting = new Promise((resolve) => setTimeout(() => resolve('still counting after 5 s'), 5000).unref());
    const error = await Promise.race([
      count(new Uint8Array(10), 10, 'application/pdf').catch((e: unknown) => e),
      stillCounting,
    ]);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'unreadable_document' });
    expect((error as Error).message).toContain('took longer than 50 ms');
  });

  it("an inline request's own deadline stops counting first, and is not reworded as the count's", async () => {
    const count = createPageCounter(endless, { limitMs: 60_000 });
    const inline = new AbortController();
    setTimeout(() => inline.abort(new Error('the inline deadline')), 20);
    const error = await count(new Uint8Array(10), 10, 'application/pdf', inline.signal).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(GatewayError);
    expect((error as Error).message).toBe('the inline deadline');
  });

  it('a count within the deadline is the count', async () => {
    const count = createPageCounter({ countPages: async () => 3 } as unknown as Engine, { limitMs: 50 });
    expect(await count(new Uint8Array(10), 10, 'application/pdf')).toBe(3);
  });
});

describe('a PDF cut short (sent while it was still being written)', () => {
  it('is called truncated, not a decompression bomb, whether counting runs out of time or fails', async () => {
    const whole = await invoicePdf(7);
    const cut = whole.subarray(0, Math.floor(whole.length * 0.8));
    const slow = await createPageCounter(endless, { limitMs: 50 })(cut, cut.length, 'application/pdf').catch(
      (e: unknown) => e,
    );
    expect(slow).toMatchObject({ code: 'unreadable_document', message: TRUNCATED_PDF });
    expect((slow as Error).message).not.toMatch(/bomb/);

    const failing = {
      countPages: async () => {
        throw new EngineError('corrupt', 'the PDF cannot be read (Invalid PDF structure.)');
      },
    } as unknown as Engine;
    // Stored (the upload route): read from its blob.
    const blob = join(mkdtempSync(join(tmpdir(), 'extract-pages-')), 'blob');
    writeFileSync(blob, cut);
    const stored = await createPageCounter(failing)({ path: blob }, cut.length, 'application/pdf').catch(
      (e: unknown) => e,
    );
    expect(stored).toMatchObject({ code: 'unreadable_document', message: TRUNCATED_PDF });
  });

  it('a whole PDF that runs out of time is still the bomb it may be', async () => {
    const whole = await invoicePdf(7);
    const error = await createPageCounter(endless, { limitMs: 50 })(whole, whole.length, 'application/pdf').catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toMatch(/took longer than 50 ms.*decompression bomb\?/);
  });
});
