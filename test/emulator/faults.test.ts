import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { request } from 'undici';
import {
  DocumentBody,
  ExtractInlineResponse,
  FAULT_VOCABULARY,
  FaultOperation,
  LedgerBody,
  UploadTicket,
} from '../../src/contract/index.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { createFaults, parseFaultFlag, seededRandom } from '../../src/emulator/faults.ts';
import { realDeps } from '../../src/emulator/clock.ts';
import { call, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';

describe('faults: rules and draws', () => {
  it('faults: the same seed draws the same faults', () => {
    const draws = (seed: number) => {
      const f = createFaults({
        rules: [{ operation: 'documents', probability: 0.3, effect: { type: 'status', status: 503 } }],
        seed,
        deps: realDeps,
      });
      return Array.from({ length: 200 }, () => (f.draw('documents') ? 1 : 0)).join('');
    };
    expect(draws(7)).toBe(draws(7));
    expect(draws(7)).not.toBe(draws(8));
    const hits = draws(7)
      .split('')
      .filter((c) => c === '1').length;
    expect(hits).toBeGreaterThan(30);
    expect(hits).toBeLessThan(90);
    expect(seededRandom(1)()).toBe(seededRandom(1)());
  });

  it('faults: a rule with times retires after that many', () => {
    const f = createFaults({ rules: [{ operation: 'upload', effect: { type: 'reset' }, times: 2 }], deps: realDeps });
    expect([f.draw('upload'), f.draw('upload'), f.draw('upload')].map((e) => e?.type ?? null)).toEqual([
      'reset',
      'reset',
      null,
    ]);
    expect(f.draw('documents')).toBeNull();
  });

  it('faults: parses the compact flag form and refuses nonsense with the grammar', () => {
    expect(parseFaultFlag('extract-inline:0.1:503')).toMatchObject({
      operation: 'extract-inline',
      probability: 0.1,
      effect: { type: 'status', status: 503 },
    });
    expect(parseFaultFlag('documents:1:latency=200-800')).toMatchObject({
      effect: { type: 'latency', min_ms: 200, max_ms: 800 },
    });
    expect(parseFaultFlag('extract-async:0.5:error').effect.type).toBe('async_error');
    expect(parseFaultFlag('webhook:0.3:duplicate').effect.type).toBe('duplicate');
    expect(() => parseFaultFlag('extract:2:boom')).toThrow(/OPERATION:PROBABILITY:EFFECT/);
    // An effect that cannot happen on the operation is refused, not kept idle.
    expect(() => parseFaultFlag('documents:1:drop')).toThrow(/drop, duplicate, delay=MS \(webhook only\)/);
  });
});

describe('faults: over HTTP', () => {
  it('serves the vocabulary of the contract (the app reads it) and refuses a rule its effect cannot apply to', async ({
    emulator,
  }) => {
    const s = await emulator();
    const served = await call(s, 'GET', '/_emulator/faults/vocabulary');
    expect(served.status).toBe(200);
    expect(served.body).toEqual(JSON.parse(JSON.stringify(FAULT_VOCABULARY)));
    expect(Object.keys(served.body.operations)).toEqual(FaultOperation.options);
    const idle = await call(s, 'POST', '/_emulator/faults', {
      body: { operation: 'documents', effect: { type: 'drop' } },
    });
    expect(idle.status).toBe(400);
    expect(idle.body.error).toMatch(/the effect drop applies only to webhook, not to documents at effect\.type/);
    expect((await call(s, 'GET', '/_emulator/faults')).body.rules).toEqual([]);
  });

  it('injects a status (429 with Retry-After), then the rule is cleared at run time', async ({ emulator }) => {
    const s = await emulator();
    const rule = await call(s, 'POST', '/_emulator/faults', {
      body: { operation: 'documents', effect: { type: 'status', status: 429, retry_after: 3 } },
    });
    expect(rule.status).toBe(200);
    expect(rule.body.id).toMatch(/^flt_/);
    const r = await call(s, 'GET', '/api/v1/documents/doc_x');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3');
    expect(r.body.code).toBe('injected_fault');
    expect((await call(s, 'GET', '/_emulator/faults')).body.rules).toHaveLength(1);
    await call(s, 'DELETE', '/_emulator/faults');
    expect((await call(s, 'GET', '/api/v1/documents/doc_x')).status).toBe(404);
  });

  it('a reset before handling charges nothing; a reset after handling charged, and the Idempotency-Key replays it for free', async ({
    emulator,
  }) => {
    const s = await emulator({
      faults: {
        rules: [
          { operation: 'extract-inline', effect: { type: 'reset', when: 'before' }, times: 1 },
          { operation: 'extract-inline', effect: { type: 'reset', when: 'after' }, times: 1 },
        ],
      },
    });
    const body = inlineBody(await invoicePdf(1));
    const send = () => call(s, 'POST', '/api/v1/extract', { body, headers: { 'idempotency-key': 'k-1' } });
    await expect(send()).rejects.toThrow();
    expect(LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body).entries).toHaveLength(0);
    await expect(send()).rejects.toThrow();
    expect(LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body).entries).toHaveLength(1);
    const third = await send();
    expect(third.status).toBe(200);
    const fourth = await send();
    expect(ExtractInlineResponse.parse(fourth.body).document_id).toBe(third.body.document_id);
    const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
    expect(ledger.entries.filter((e) => e.kind === 'reserve')).toHaveLength(1);
    expect(ledger.balance).toBe(999);
  });

  it('idempotency_key: false rehearses a service that ignores the header: each resend is a new document and a charge', async ({
    emulator,
  }) => {
    const s = await emulator({ idempotency_key: false });
    const body = inlineBody(await invoicePdf(1));
    const send = () => call(s, 'POST', '/api/v1/extract', { body, headers: { 'idempotency-key': 'k-1' } });
    const first = ExtractInlineResponse.parse((await send()).body);
    const second = ExtractInlineResponse.parse((await send()).body);
    expect(second.document_id).not.toBe(first.document_id);
    const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
    expect(ledger.entries.filter((e) => e.kind === 'reserve')).toHaveLength(2);
  });

  it('Idempotency-Key: a different body under the same key is refused; an error frees the key', async ({
    emulator,
  }) => {
    const s = await emulator({ credits: 0 });
    const a = inlineBody(await invoicePdf(2));
    expect((await call(s, 'POST', '/api/v1/extract', { body: a, headers: { 'idempotency-key': 'k' } })).status).toBe(
      402,
    );
    await call(s, 'POST', '/_emulator/credits', { body: { pages: 5 } });
    expect((await call(s, 'POST', '/api/v1/extract', { body: a, headers: { 'idempotency-key': 'k' } })).status).toBe(
      200,
    );
    const b = inlineBody(await invoicePdf(3));
    expect((await call(s, 'POST', '/api/v1/extract', { body: b, headers: { 'idempotency-key': 'k' } })).status).toBe(
      400,
    );
  });

  it('truncates an answer: the client sees a broken body, not a valid one', async ({ emulator }) => {
    const s = await emulator({ faults: { rules: [{ operation: 'upload-url', effect: { type: 'truncate' } }] } });
    const res = await request(`${s.url}/api/v1/upload-url`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${DEFAULT_CONFIG.parsers[0]!.api_keys[0]}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ file_name: 'a.pdf', file_type: 'application/pdf' }),
    });
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow();
  });

  it('adds latency, and an async error ends the document in error with a refund', async ({ emulator }) => {
    const s = await emulator({
      faults: {
        rules: [
          { operation: 'documents', effect: { type: 'latency', ms: 300 } },
          { operation: 'extract-async', effect: { type: 'async_error' } },
        ],
      },
    });
    const started = Date.now();
    await call(s, 'GET', '/api/v1/documents/doc_x');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const bytes = await invoicePdf(4);
    const t = UploadTicket.parse(
      (await call(s, 'POST', '/api/v1/upload-url', { body: { file_name: 'a.pdf', file_type: 'application/pdf' } }))
        .body,
    );
    await call(s, 'PUT', t.upload_url, { raw: bytes, key: null, headers: { 'content-type': 'application/pdf' } });
    const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: t.storage_path } });
    const doc = DocumentBody.parse((await waitForDocument(s, r.body.document_id)).body);
    expect(doc.status).toBe('error');
    expect(doc.error).toContain('injected fault');
    const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
    expect(ledger.entries.map((e) => e.kind)).toEqual(['reserve', 'refund']);
    expect(ledger.balance).toBe(1000);
  });

  it('Prefer forces 402, 503 on inline, and an async error, charging nothing', async ({ emulator }) => {
    const s = await emulator();
    const body = inlineBody(await invoicePdf(5));
    expect((await call(s, 'POST', '/api/v1/extract', { body, headers: { prefer: 'code=402' } })).status).toBe(402);
    expect((await call(s, 'POST', '/api/v1/extract', { body, headers: { prefer: 'code=503' } })).status).toBe(503);
    const t = UploadTicket.parse(
      (await call(s, 'POST', '/api/v1/upload-url', { body: { file_name: 'a.pdf', file_type: 'application/pdf' } }))
        .body,
    );
    await call(s, 'PUT', t.upload_url, {
      raw: await invoicePdf(6),
      key: null,
      headers: { 'content-type': 'application/pdf' },
    });
    const r = await call(s, 'POST', '/api/v1/extract', {
      body: { storage_path: t.storage_path },
      headers: { prefer: 'outcome=error' },
    });
    expect(DocumentBody.parse((await waitForDocument(s, r.body.document_id)).body).status).toBe('error');
    expect(LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body).balance).toBe(1000);
  });

  it('webhook faults: a duplicate arrives twice with one document_id; a drop is retried', async ({
    hookServer,
    emulator,
  }) => {
    const hook = await hookServer();
    const s = await emulator({
      parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url: hook.url }] }],
      webhook_delivery: { timeout_ms: 2000, time_scale: 0.0002 },
      faults: {
        rules: [
          { operation: 'webhook', effect: { type: 'drop' }, times: 1 },
          { operation: 'webhook', effect: { type: 'duplicate' }, times: 1 },
        ],
      },
    });
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(7)) });
    await hook.waitFor(2);
    expect(hook.hits.map((h) => JSON.parse(h.body).document_id)).toEqual([r.body.document_id, r.body.document_id]);
    const d = (await call(s, 'GET', '/_emulator/deliveries')).body.deliveries[0];
    expect(d.attempts.map((a: { error: string | null }) => a.error)).toEqual(['injected fault: attempt dropped', null]);
  });

  it('extract-async faults apply to every background route: an application upload fails with the injected error', async ({
    emulator,
  }) => {
    const s = await emulator({
      faults: {
        rules: [{ operation: 'extract-async', effect: { type: 'async_error', message: 'injected: scanner jam' } }],
      },
    });
    const form = new FormData();
    form.append('file', new Blob([await invoicePdf(8)], { type: 'application/pdf' }), 'app.pdf');
    const res = await fetch(`${s.url}/_emulator/parsers/prs_invoices/documents`, { method: 'POST', body: form });
    const { documents } = (await res.json()) as { documents: Array<{ document_id: string }> };
    const doc = DocumentBody.parse((await waitForDocument(s, documents[0]!.document_id)).body);
    expect(doc).toMatchObject({ status: 'error' });
    expect(doc.error).toContain('injected: scanner jam');
    expect(LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body).balance).toBe(1000);
  });
});

describe('faults: Prefer, as the service would answer it', () => {
  it('Prefer is honoured only after authentication: without a key it is 401, whatever the header asks', async ({
    emulator,
  }) => {
    const s = await emulator();
    for (const prefer of ['code=402', 'code=503', 'code=500']) {
      const r = await call(s, 'POST', '/api/v1/extract', {
        key: null,
        headers: { prefer },
        body: inlineBody(await invoicePdf(1)),
      });
      expect(r.status).toBe(401);
    }
    expect(
      (
        await call(s, 'POST', '/api/v1/extract', {
          key: 'ext_not_a_key_at_all',
          headers: { prefer: 'code=402' },
          body: inlineBody(await invoicePdf(1)),
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await call(s, 'POST', '/api/v1/extract', {
          headers: { prefer: 'code=402' },
          body: inlineBody(await invoicePdf(1)),
        })
      ).status,
    ).toBe(402);
  });

  it('Prefer: code=500 rehearses the spec\'s "500: refunded": reserved, failed, refunded in the request', async ({
    emulator,
  }) => {
    const s = await emulator();
    const r = await call(s, 'POST', '/api/v1/extract', {
      headers: { prefer: 'code=500' },
      body: inlineBody(await invoicePdf(2)),
    });
    expect(r.status).toBe(500);
    expect(r.body.code).toBe('extraction_failed');
    expect(r.body.error).toContain('refunded');
    const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
    expect(ledger.entries.map((e) => e.kind)).toEqual(['reserve', 'refund']);
    expect(ledger.balance).toBe(1000);
  });
});
