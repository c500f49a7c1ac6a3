import { describe, expect } from 'vitest';
import { DocumentBody } from '../../src/contract/index.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import type { Engine, EngineOutput } from '../../src/engine/types.ts';
import { call, waitForDocument } from '../helpers/emulator.ts';
import { stored } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * processing.slow_ms reaches the background queue: a document still reading that long gives its
 * place to the next. The engine here is a stand-in that holds its first document until released,
 * so only the queue is in question (the engine pool's own fairness: test/engine/pool.test.ts; both
 * with real readers: test/reliability/hostile-engine.proc.test.ts).
 */

const SHIPPED_SLOW_MS = resolveConfig(DEFAULT_CONFIG).processing.slow_ms;

function holdingEngine() {
  let release: (out: EngineOutput) => void = () => {};
  const held = new Promise<EngineOutput>((resolve) => (release = resolve));
  let calls = 0;
  const engine: Engine = {
    countPages: async () => 1,
    extract: async () => (++calls === 1 ? held : { pageCount: 1, results: {}, grounding: {} }),
    close: async () => {},
  };
  return { engine, release: () => release({ pageCount: 1, results: {}, grounding: {} }) };
}

async function submit(s: { url: string }, n: number): Promise<string> {
  const ticket = await stored(s, await invoicePdf(n), `doc-${n}.pdf`);
  const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
  expect(r.status).toBe(200);
  return r.body.document_id as string;
}

describe('processing.slow_ms', () => {
  it('defaults to 5 s', () => {
    expect(SHIPPED_SLOW_MS).toBe(5000);
  });

  it('a background document read for longer than slow_ms gives its only place to the next one', async ({
    emulator,
  }) => {
    // Beside it, a control whose slow_ms is an hour: its honest document, sent first, must still
    // wait when the other's is done. A queue that ignored the setting would free both at the
    // shipped 5 s, the control's first; one that never yields would free neither. No clock is read.
    const held = holdingEngine();
    const control = holdingEngine();
    const s = await emulator({ processing: { ms_per_page: 0, concurrency: 1, slow_ms: 50 } }, { engine: held.engine });
    const c = await emulator(
      { processing: { ms_per_page: 0, concurrency: 1, slow_ms: 3_600_000 } },
      { engine: control.engine },
    );
    try {
      await submit(c, 33);
      const waiting = await submit(c, 34);
      const slow = await submit(s, 31);
      const honest = DocumentBody.parse((await waitForDocument(s, await submit(s, 32))).body);
      expect(honest.status, honest.error ?? '').toBe('completed');
      expect(DocumentBody.parse((await call(s, 'GET', `/api/v1/documents/${slow}`)).body).status).toBe('processing');
      expect(DocumentBody.parse((await call(c, 'GET', `/api/v1/documents/${waiting}`)).body).status).toBe('processing');
    } finally {
      held.release();
      control.release();
    }
  });
});
