import { request as httpRequest } from 'node:http';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { DeliveriesBody, LedgerBody, WebhookPayload } from '../../src/contract/index.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { markMissing } from '../../src/emulator/profile.ts';
import type { Engine } from '../../src/engine/types.ts';
import { tempDir } from '../helpers/cli.ts';
import { call, inlineBody } from '../helpers/emulator.ts';
import { invoicePdf, makePdf } from '../helpers/pdf.ts';

/**
 * `extract serve --profile deployed`: the service as its deployed application behaves
 * (docs/serve-profiles.md), over real HTTP. The interface profile's own tests are the other files.
 */
const DEPLOYED = { profile: 'deployed' as const };

/**
 * An engine that counts 2 pages at once and reads until its caller gives up: a request past its
 * time limit whatever the machine's load (page counting never reaches the limit).
 */
const slowReader: Engine = {
  countPages: async () => 2,
  extract: (_input, options) =>
    new Promise((_resolve, reject) => {
      options?.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true });
    }),
  close: async () => {},
};

const ledgerOf = async (s: { url: string }) => LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
const kindsFor = (ledger: LedgerBody, documentId: string) =>
  ledger.entries.filter((e) => e.document_id === documentId).map((e) => e.kind);

describe('serve --profile deployed', () => {
  it('has only inline extract: upload-url and documents/{id} are the framework 404 HTML page; a storage_path is refused; the emulator surface still works', async ({
    emulator,
  }) => {
    const s = await emulator(DEPLOYED);
    const ticket = await call(s, 'POST', '/api/v1/upload-url', {
      body: { file_name: 'a.pdf', file_type: 'application/pdf' },
    });
    expect(ticket.status).toBe(404);
    expect(ticket.headers.get('content-type')).toMatch(/^text\/html/);
    expect(ticket.body).toMatch(/^<!DOCTYPE html>.*404/);
    const inline = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(3)) });
    expect(inline.status).toBe(200);
    expect(inline.body.success).toBe(true);
    expect(inline.body).not.toHaveProperty('page_count');
    const read = await call(s, 'GET', `/api/v1/documents/${inline.body.document_id}`);
    expect(read.status).toBe(404);
    expect(read.headers.get('content-type')).toMatch(/^text\/html/);
    const stored = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: 'up/x/a.pdf' } });
    expect(stored.status).toBe(400);
    // The application's error bodies are { error } alone.
    expect(stored.body).toEqual({ error: expect.stringContaining('inline files only') });
    const unknownKey = await call(s, 'POST', '/api/v1/extract', {
      body: inlineBody(Buffer.from('x')),
      key: 'ext_nobody_key_9999',
    });
    expect(unknownKey.status).toBe(401);
    expect(Object.keys(unknownKey.body)).toEqual(['error']);
    expect((await call(s, 'GET', '/_emulator/health')).body).toEqual({ ok: true });
    const doc = await call(s, 'GET', `/_emulator/documents/${inline.body.document_id}`);
    expect(doc.body.status).toBe('completed');
  });

  it('a body over its limit is 413 text/plain FUNCTION_PAYLOAD_TOO_LARGE, before anything is charged', async ({
    emulator,
  }) => {
    const s = await emulator({ ...DEPLOYED, deployed: { max_body_bytes: 50_000 } });
    const big = inlineBody(Buffer.alloc(60_000, 7));
    const r = await call(s, 'POST', '/api/v1/extract', { body: big });
    expect(r.status).toBe(413);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(r.body).toContain('FUNCTION_PAYLOAD_TOO_LARGE');
    expect((await ledgerOf(s)).entries).toEqual([]);
  });

  it('the default body limit is the platform 4.5 MB: a 4.6 MB body is 413 where the interface takes it', async ({
    emulator,
  }) => {
    const body = inlineBody(Buffer.alloc(3_450_000, 7), 'big.bin', 'application/octet-stream');
    const deployed = await emulator(DEPLOYED);
    const r = await call(deployed, 'POST', '/api/v1/extract', { body });
    expect(r.status).toBe(413);
    expect(r.body).toContain('FUNCTION_PAYLOAD_TOO_LARGE');
    const iface = await emulator();
    expect((await call(iface, 'POST', '/api/v1/extract', { body })).status).not.toBe(413);
  });

  it('past its time limit: 504 text/plain FUNCTION_INVOCATION_TIMEOUT; the pages stay reserved until the clean-up refunds them later', async ({
    emulator,
  }) => {
    const s = await emulator(
      { ...DEPLOYED, deployed: { function_timeout_ms: 300, cleanup_after_ms: 400 } },
      { engine: slowReader },
    );
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(5, 2)) });
    expect(r.status).toBe(504);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(r.body).toContain('FUNCTION_INVOCATION_TIMEOUT');
    const reserved = await ledgerOf(s);
    const id = reserved.entries[0]!.document_id!;
    expect(kindsFor(reserved, id)).toEqual(['reserve']);
    expect(reserved.balance).toBe(998);
    expect((await call(s, 'GET', `/_emulator/documents/${id}`)).body.status).toBe('processing');
    await expect.poll(async () => kindsFor(await ledgerOf(s), id), { timeout: 30_000 }).toEqual(['reserve', 'refund']);
    expect((await ledgerOf(s)).balance).toBe(1000);
    const doc = (await call(s, 'GET', `/_emulator/documents/${id}`)).body;
    expect(doc.status).toBe('error');
    expect(doc.error).toContain('clean-up');
  });

  it("a restart keeps the clean-up job's schedule: not refunded at once on start, refunded once due", async ({
    emulator,
  }) => {
    const dataDir = tempDir();
    const config = (cleanupMs: number) => ({
      ...DEPLOYED,
      deployed: { function_timeout_ms: 300, cleanup_after_ms: cleanupMs },
    });
    const first = await emulator(config(3_600_000), { engine: slowReader, dataDir });
    expect((await call(first, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(11, 2)) })).status).toBe(
      504,
    );
    const id = (await ledgerOf(first)).entries[0]!.document_id!;
    await first.close();
    // An hour's delay: the restart leaves the reservation, where the interface refunds inline documents at once.
    const second = await emulator(config(3_600_000), { engine: slowReader, dataDir });
    expect(kindsFor(await ledgerOf(second), id)).toEqual(['reserve']);
    expect((await call(second, 'GET', `/_emulator/documents/${id}`)).body.status).toBe('processing');
    await second.close();
    const third = await emulator(config(0), { engine: slowReader, dataDir });
    await expect
      .poll(async () => kindsFor(await ledgerOf(third), id), { timeout: 30_000 })
      .toEqual(['reserve', 'refund']);
  });

  it('the interface profile answers the same time-out 503 and refunds at once', async ({ emulator }) => {
    const s = await emulator({ inline: { timeout_ms: 300 } }, { engine: slowReader });
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(5, 2)) });
    expect(r.status).toBe(503);
    expect((await ledgerOf(s)).entries.map((e) => e.kind)).toEqual(['reserve', 'refund']);
  });

  it('a failed extraction is HTTP 200 success:false with its document_id, refunded', async ({ emulator }) => {
    const s = await emulator(DEPLOYED);
    const r = await call(s, 'POST', '/api/v1/extract', {
      body: inlineBody(await invoicePdf(6, 6)),
      headers: { prefer: 'code=500' },
    });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(false);
    expect(r.body.document_id).toMatch(/^doc_/);
    expect(r.body.error).toEqual(expect.any(String));
    expect(kindsFor(await ledgerOf(s), r.body.document_id)).toEqual(['reserve', 'refund']);
  });

  it('a failed extraction of 5 pages or fewer answers success:true with every field "-", refunded', async ({
    emulator,
  }) => {
    const s = await emulator(DEPLOYED);
    const r = await call(s, 'POST', '/api/v1/extract', {
      body: inlineBody(await invoicePdf(7, 5)),
      headers: { prefer: 'code=500' },
    });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.results.invoice_number).toBe('-');
    expect(r.body.results.vendor.name).toBe('-');
    expect(r.body.results.line_items).toBe('-');
    expect(JSON.stringify(r.body.results)).not.toMatch(/null|:[0-9tf]/);
    expect(kindsFor(await ledgerOf(s), r.body.document_id)).toEqual(['reserve', 'refund']);
  });

  it('missing values are "-", tables included, in the answer and the webhook event; found values are untouched', async ({
    hookServer,
    emulator,
  }) => {
    const hook = await hookServer();
    const s = await emulator({
      ...DEPLOYED,
      parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url: hook.url }] }],
    });
    const pdf = await makePdf([['INVOICE', 'Invoice Number: INV-77']]);
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(pdf) });
    expect(r.status).toBe(200);
    expect(r.body.results.invoice_number).toBe('INV-77');
    expect(r.body.results.due_date).toBe('-');
    expect(r.body.results.line_items).toBe('-');
    expect(JSON.stringify(r.body.results)).not.toContain('null');
    await hook.waitFor(1);
    expect(WebhookPayload.parse(JSON.parse(hook.hits[0]!.body)).data).toEqual(r.body.results);
    expect(markMissing({ t: [{ a: null, b: 2 }], o: { c: null }, d: 'x', e: null }, '-')).toEqual({
      t: [{ a: '-', b: 2 }],
      o: { c: '-' },
      d: 'x',
      e: '-',
    });
  });

  it('ignores Idempotency-Key: the same key and body twice is two documents and two charges', async ({ emulator }) => {
    const s = await emulator(DEPLOYED);
    const body = inlineBody(await invoicePdf(8));
    const headers = { 'idempotency-key': 'same-key-1' };
    const a = await call(s, 'POST', '/api/v1/extract', { body, headers });
    const b = await call(s, 'POST', '/api/v1/extract', { body, headers });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.document_id).not.toBe(a.body.document_id);
    expect((await ledgerOf(s)).entries.map((e) => e.kind)).toEqual(['reserve', 'reserve']);
  });

  it('webhooks: at most 3 attempts, User-Agent Parsli/1.0', async ({ hookServer, emulator }) => {
    const hook = await hookServer({ statuses: [500, 502, 503, 200] });
    const s = await emulator({
      ...DEPLOYED,
      parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url: hook.url }] }],
      webhook_delivery: { timeout_ms: 10_000, time_scale: 0.001 },
    });
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(9)) });
    await expect
      .poll(
        async () =>
          DeliveriesBody.parse((await call(s, 'GET', `/_emulator/deliveries?document_id=${r.body.document_id}`)).body)
            .deliveries[0]?.state,
        { timeout: 30_000 },
      )
      .toBe('failed');
    expect(hook.hits).toHaveLength(3);
    expect(hook.hits.map((h) => h.headers['user-agent'])).toEqual(['Parsli/1.0', 'Parsli/1.0', 'Parsli/1.0']);
  });

  it('webhooks: no retry after a 4xx', async ({ hookServer, emulator }) => {
    const hook = await hookServer({ statuses: [404, 200] });
    const s = await emulator({
      ...DEPLOYED,
      parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url: hook.url }] }],
      webhook_delivery: { timeout_ms: 10_000, time_scale: 0.001 },
    });
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(10)) });
    const deliveries = async () =>
      DeliveriesBody.parse((await call(s, 'GET', `/_emulator/deliveries?document_id=${r.body.document_id}`)).body)
        .deliveries;
    await expect.poll(async () => (await deliveries())[0]?.state, { timeout: 30_000 }).toBe('failed');
    expect((await deliveries())[0]!.attempts.map((a) => a.status)).toEqual([404]);
    expect(hook.hits).toHaveLength(1);
  });

  it('the test action sends document_id "test-<ms>" with sample data and no "test" field', async ({
    hookServer,
    emulator,
  }) => {
    const hook = await hookServer();
    const s = await emulator({
      ...DEPLOYED,
      parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url: hook.url, id: 'hook' }] }],
    });
    const r = await call(s, 'POST', '/_emulator/integrations/hook/test');
    expect(r.status).toBe(200);
    await hook.waitFor(1);
    const payload = JSON.parse(hook.hits[0]!.body);
    expect(payload).not.toHaveProperty('test');
    expect(payload.document_id).toMatch(/^test-\d+$/);
    expect(payload.data.invoice_number).toEqual(expect.any(String));
  });

  it('a Host starting with www. is a permanent redirect (308) to the apex, path and query kept', async ({
    emulator,
  }) => {
    const s = await emulator(DEPLOYED);
    const port = new URL(s.url).port;
    const answer = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/extract?x=1',
          headers: { host: `www.localhost:${port}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, location: res.headers.location });
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(answer).toEqual({ status: 308, location: `http://localhost:${port}/api/v1/extract?x=1` });
  });
});
