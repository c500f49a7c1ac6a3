import { describe, expect } from 'vitest';
import { DocumentBody } from '../../src/contract/index.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { EnginePool } from '../../src/engine/index.ts';
import type { Engine } from '../../src/engine/types.ts';
import { call, KEY, waitForDocument } from '../helpers/emulator.ts';
import { exactLedger, stored } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/** Stored objects: the bytes counted and charged are the bytes extracted; storage takes one credential. */

const OPENING = resolveConfig(DEFAULT_CONFIG).credits;

describe('hostile: stored objects', () => {
  it('a PUT racing the extract of its storage path gets 409; the bytes counted are the bytes extracted', async ({
    emulator,
  }) => {
    const real = new EnginePool({ workers: 1 });
    let counting!: () => void;
    const started = new Promise<void>((resolve) => (counting = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Counting waits at the gate, so the racing PUT lands exactly between counting and charging.
    const engine: Engine = {
      countPages: async (bytes, mime) => {
        counting();
        await gate;
        return real.countPages(bytes, mime);
      },
      extract: (input) => real.extract(input),
      close: () => real.close(),
    };
    const s = await emulator({}, { engine });
    const ticket = await stored(s, await invoicePdf(1, 1));
    const extract = call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
    await started;
    const put = await call(s, 'PUT', ticket.upload_url, {
      raw: await invoicePdf(2, 5),
      key: null,
      headers: { 'content-type': 'application/pdf' },
    });
    release();
    expect(put.status).toBe(409);
    expect(put.body.code).toBe('conflict');
    const ex = await extract;
    expect(ex.status).toBe(200);
    const doc = DocumentBody.parse((await waitForDocument(s, ex.body.document_id)).body);
    expect(doc).toMatchObject({ status: 'completed', page_count: 1 });
    expect(doc.results?.invoice_number).toBe('INV-00001');
    expect(await exactLedger(s, OPENING)).toMatchObject({ balance: OPENING - 1, sum: OPENING - 1, negative: 0 });
    await real.close();
  });

  it('a PUT that carries an Authorization header is a 400, as signed-URL storage answers', async ({ emulator }) => {
    const s = await emulator();
    const t = await call(s, 'POST', '/api/v1/upload-url', {
      body: { file_name: 'a.pdf', file_type: 'application/pdf' },
    });
    const put = await call(s, 'PUT', t.body.upload_url, {
      raw: await invoicePdf(3),
      key: KEY,
      headers: { 'content-type': 'application/pdf' },
    });
    expect(put.status).toBe(400);
    expect(put.body.error).toContain('takes no Authorization header');
    expect(JSON.stringify(put.body)).not.toContain(KEY);
    // Without it, the same address works.
    const ok = await call(s, 'PUT', t.body.upload_url, {
      raw: await invoicePdf(3),
      key: null,
      headers: { 'content-type': 'application/pdf' },
    });
    expect(ok.status).toBe(200);
  });
});
