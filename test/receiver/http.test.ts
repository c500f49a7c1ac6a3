import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect } from 'vitest';
import { ReceiverAccepted, ReceiverErrorBody, ReceiverTestAccepted } from '../../src/contract/index.ts';
import { INBOX_FILE } from '../../src/receiver/index.ts';
import { it, payload, send } from './helpers.ts';

/** The rows of one table of a closed receiver's inbox. */
function rowsOf(dataDir: string, sql: string): Record<string, unknown>[] {
  const db = new DatabaseSync(join(dataDir, INBOX_FILE), { readOnly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

describe('listen: HTTP', () => {
  it('listen: accepts POST and PUT on the path, answers 200 with the document_id', async ({ receiver }) => {
    const r = await receiver();
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhook$/);
    const post = await send(r.url, payload({ document_id: 'doc_post' }));
    const put = await send(r.url, payload({ document_id: 'doc_put' }), { method: 'PUT' });
    expect(post).toMatchObject({ status: 200, body: { received: true, document_id: 'doc_post' } });
    expect(put).toMatchObject({ status: 200, body: { received: true, document_id: 'doc_put' } });
    await r.drained();
    expect(r.lines).toEqual(['<-- doc_post parser=Invoices pages=2 new', '<-- doc_put parser=Invoices pages=2 new']);
  });

  it('listen: every answer has the shape of the contract, errors the same ErrorBody as the emulator', async ({
    receiver,
  }) => {
    const r = await receiver({ maxBodyBytes: 2048, auth: { type: 'bearer', token: 'sekrit' } });
    const auth = { authorization: 'Bearer sekrit' };
    expect(ReceiverAccepted.parse((await send(r.url, payload(), auth)).body)).toMatchObject({ inbox_seq: 1 });
    expect(ReceiverTestAccepted.safeParse((await send(r.url, payload({ test: true }), auth)).body).success).toBe(true);
    const errors = [
      [401, await send(r.url, payload())],
      [405, await send(r.url, payload(), { ...auth, method: 'GET' })],
      [404, await send(new URL('/elsewhere', r.url).href, payload(), auth)],
      [400, await send(r.url, null, { ...auth, raw: '{' })],
      [413, await send(r.url, payload({ data: { notes: 'x'.repeat(4096) } }), auth)],
    ] as const;
    for (const [status, res] of errors) {
      expect(res.status).toBe(status);
      expect(ReceiverErrorBody.parse(res.body)).toMatchObject({ success: false });
    }
  });

  it('listen: other methods are 405 JSON with Allow, other paths 404 JSON', async ({ receiver }) => {
    const r = await receiver({ path: 'hooks/extract/' });
    expect(r.url).toMatch(/\/hooks\/extract$/);
    for (const method of ['GET', 'DELETE', 'PATCH']) {
      const res = await send(r.url, payload(), { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST, PUT');
      expect(res.body).toMatchObject({ code: 'method_not_allowed' });
    }
    const missing = await send(new URL('/webhook', r.url).href, payload());
    expect(missing).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((missing.body as { error: string }).error).toContain('/hooks/extract');
  });

  it('listen: a body that is not a JSON object is 400, logged, and its raw body kept aside in the rejected table', async ({
    receiver,
  }) => {
    const r = await receiver();
    const notJson = await send(r.url, null, { raw: '{"event": "document.proc' });
    const array = await send(r.url, [payload()]);
    const empty = await send(r.url, null, { raw: '' });
    for (const res of [notJson, array, empty])
      expect(res).toMatchObject({ status: 400, body: { code: 'invalid_payload' } });
    expect((array.body as { error: string }).error).toBe('not a document.processed event: a JSON array, not an object');
    expect(r.lines[0]).toMatch(/^<-- 400 POST: not JSON .* \(kept as rejected #1\)$/);
    expect(r.stats()).toMatchObject({ rejected: 3, received: 0 });
    await r.close();
    const rejected = rowsOf(r.dataDir, 'SELECT id, method, content_type, reason, body FROM rejected ORDER BY id');
    expect(rejected.map((row) => Buffer.from(row.body as Uint8Array).toString())).toEqual([
      '{"event": "document.proc',
      JSON.stringify([payload()]),
      '',
    ]);
    expect(rejected[0]).toMatchObject({ method: 'POST', content_type: 'application/json' });
    expect(rowsOf(r.dataDir, 'SELECT * FROM inbox')).toEqual([]);
  });

  it('listen: a JSON object that is not a valid document.processed is 200, kept in the inbox (outcome invalid) and logged with the first fields that fail', async ({
    receiver,
  }) => {
    const r = await receiver();
    const wrongShape = await send(r.url, { ...payload(), event: 'document.deleted', metadata: { file_name: 'x.pdf' } });
    expect(wrongShape).toMatchObject({ status: 200, body: { received: true, document_id: 'doc_1', inbox_seq: 1 } });
    await r.drained();
    expect(r.lines).toEqual([
      '<-- doc_1 kept, not written: Invalid input: expected "document.processed" at event; missing at metadata.mime_type; missing at metadata.source_type; and 1 more (inbox #1; an event of a shape listen does not know)',
    ]);
    expect(r.stats()).toMatchObject({ rejected: 0, received: 1, kept: 1 });
    await r.close();
    expect(rowsOf(r.dataDir, 'SELECT document_id, outcome FROM inbox')).toEqual([
      { document_id: 'doc_1', outcome: 'invalid' },
    ]);
    expect(rowsOf(r.dataDir, 'SELECT * FROM seen')).toEqual([]);
  });

  it('listen: a body over the limit is 413 JSON and nothing is stored', async ({ receiver }) => {
    const r = await receiver({ maxBodyBytes: 2048 });
    const big = payload({ data: { notes: 'x'.repeat(4096) } });
    const res = await send(r.url, big);
    expect(res).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
    expect(r.lines).toEqual(['<-- 413 POST: body over 2048 bytes']);
    // Just under the limit still goes through.
    expect((await send(r.url, payload({ data: { notes: 'x'.repeat(1500) } }))).status).toBe(200);
    await r.drained();
    expect(r.stats()).toMatchObject({ received: 1, rejected: 1 });
  });

  it('listen: --json prints every log line as NDJSON with the same facts', async ({ receiver }) => {
    const r = await receiver({ json: true, auth: { type: 'bearer', token: 'sekrit' } });
    await send(r.url, payload(), { authorization: 'Bearer sekrit' });
    await send(r.url, payload(), { authorization: 'Bearer nope' });
    await send(r.url, null, { raw: 'nope', authorization: 'Bearer sekrit' });
    await r.drained();
    await r.close();
    const events: unknown[] = r.lines.map((l) => JSON.parse(l));
    expect(events).toEqual(
      expect.arrayContaining([
        { type: 'event', document_id: 'doc_1', parser: 'Invoices', pages: 2, outcome: 'new', method: 'POST' },
        { type: 'unauthorized', status: 401, method: 'POST', path: '/webhook', reason: 'wrong token' },
        expect.objectContaining({ type: 'invalid', status: 400, rejected_id: 1 }),
        { type: 'summary', received: 1, new: 1, duplicates: 0, kept: 0, tests: 0, rejected: 1, unauthorized: 1 },
      ]),
    );
    expect(r.lines.join('\n')).not.toContain('sekrit');
  });

  it('listen: processing happens after the reply; an event held back is processed before close() returns', async ({
    receiver,
  }) => {
    const r = await receiver({ workerDelayMs: 60_000 });
    const res = await send(r.url, payload());
    expect(res.status).toBe(200);
    // Not processed yet (held back), but already in the inbox.
    expect(r.lines).toEqual([]);
    expect(r.stdout()).toBe('');
    // close() processes what was held before the inbox closes.
    await r.close();
    expect(r.lines[0]).toBe('<-- doc_1 parser=Invoices pages=2 new');
    expect(rowsOf(r.dataDir, 'SELECT document_id, outcome FROM inbox')).toEqual([
      { document_id: 'doc_1', outcome: 'new' },
    ]);
  });
});
