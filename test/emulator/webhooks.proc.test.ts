import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import type { HookServer } from '../helpers/hook-server.ts';
import {
  DeliveriesBody,
  Delivery,
  DocumentBody,
  UploadTicket,
  WebhookPayload,
  mirrorsDefinition,
} from '../../src/contract/index.ts';
import { DEFAULT_CONFIG, INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from '../../src/emulator/webhooks/dispatcher.ts';
import { tempDir, writeJson } from '../helpers/cli.ts';
import { call, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { mailer } from '../helpers/smtp.ts';

type Hook = {
  url: string;
  method?: 'POST' | 'PUT';
  auth?: { type: 'none' } | { type: 'bearer'; token: string } | { type: 'basic'; username: string; password: string };
  id?: string;
};
const withHooks = (hooks: Hook[], timeScale = 0.0002) => ({
  parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: hooks }],
  webhook_delivery: { timeout_ms: 2000, time_scale: timeScale },
});

describe('emulator: outbound webhooks', () => {
  it.for([
    ['POST', { type: 'none' as const }, undefined],
    ['PUT', { type: 'bearer' as const, token: 'tok_receiver_secret' }, 'Bearer tok_receiver_secret'],
    [
      'POST',
      { type: 'basic' as const, username: 'hooks', password: 'p@ss:word' },
      `Basic ${Buffer.from('hooks:p@ss:word').toString('base64')}`,
    ],
  ] as const)(
    'delivers document.processed by %s with auth %o, payload exactly per the spec',
    async ([method, auth, header], { hookServer, emulator }) => {
      const hook = await hookServer();
      const s = await emulator(withHooks([{ url: hook.url, method: method as 'POST' | 'PUT', auth }]));
      const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(42, 2), 'march.pdf') });
      expect(r.status).toBe(200);
      await hook.waitFor(1);
      const hit = hook.hits[0]!;
      expect(hit.method).toBe(method);
      expect(hit.headers.authorization).toBe(header);
      expect(hit.headers['content-type']).toBe('application/json');
      const payload = WebhookPayload.parse(JSON.parse(hit.body));
      expect(payload.event).toBe('document.processed');
      expect(payload.parser_id).toBe('prs_invoices');
      expect(payload.parser_name).toBe('Invoices');
      expect(payload.document_id).toBe(r.body.document_id);
      expect(payload.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(payload.data).toEqual(r.body.results);
      expect(payload.data.due_date).toBeNull();
      expect(mirrorsDefinition(INVOICE_FIELDS, payload.data)).toEqual({ ok: true });
      expect(payload.metadata).toEqual({
        file_name: 'march.pdf',
        mime_type: 'application/pdf',
        source_type: 'api',
        page_count: 2,
      });
    },
  );

  it('retries a failing receiver with the same event and document_id until a 2xx', async ({ hookServer, emulator }) => {
    const hook = await hookServer({ statuses: [500, 503, 200] });
    const s = await emulator(withHooks([{ url: hook.url }]));
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(1)) });
    await hook.waitFor(3);
    const bodies = hook.hits.map((h) => h.body);
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!).document_id).toBe(r.body.document_id);
    const list = DeliveriesBody.parse(
      (await call(s, 'GET', `/_emulator/deliveries?document_id=${r.body.document_id}`)).body,
    );
    expect(list.deliveries).toHaveLength(1);
    const d = list.deliveries[0]!;
    expect(d.state).toBe('delivered');
    expect(d.attempts.map((a) => a.status)).toEqual([500, 503, 200]);
    expect(d.attempts[0]!.response_excerpt).toBe('ok from hook server');
  });

  it('gives up after the published schedule and records every attempt; recover sends the failed ones again', async ({
    hookServer,
    emulator,
  }) => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(RETRY_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    const hook = await hookServer({ statuses: Array(8).fill(500) });
    const s = await emulator(withHooks([{ url: hook.url }], 0.00001));
    const since = new Date().toISOString();
    await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(2)) });
    await hook.waitFor(8);
    await expect
      .poll(
        async () =>
          DeliveriesBody.parse((await call(s, 'GET', '/_emulator/deliveries?outcome=failed')).body).deliveries.length,
      )
      .toBe(1);
    const recovered = await call(s, 'POST', '/_emulator/deliveries/recover', { body: { since } });
    expect(recovered.body).toEqual({ requeued: 1 });
    await hook.waitFor(9);
    await expect
      .poll(
        async () =>
          DeliveriesBody.parse((await call(s, 'GET', '/_emulator/deliveries?outcome=delivered')).body).deliveries
            .length,
      )
      .toBe(1);
  });

  it('a failing integration neither fails the extraction nor stops another integration', async ({
    hookServer,
    emulator,
  }) => {
    const good = await hookServer();
    const dead = await hookServer();
    await dead.close();
    const s = await emulator(
      withHooks(
        [
          { url: dead.url, id: 'dead' },
          { url: good.url, id: 'good' },
        ],
        1,
      ),
    );
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(3)) });
    expect(r.status).toBe(200);
    await good.waitFor(1);
    await expect
      .poll(
        async () =>
          DeliveriesBody.parse((await call(s, 'GET', '/_emulator/deliveries?integration=dead')).body).deliveries[0]
            ?.attempts.length,
      )
      .toBe(1);
    const dead1 = DeliveriesBody.parse((await call(s, 'GET', '/_emulator/deliveries?integration=dead')).body)
      .deliveries[0]!;
    expect(dead1.state).toBe('pending');
    expect(dead1.attempts[0]!.status).toBeNull();
    expect(dead1.attempts[0]!.error).toMatch(/ECONNREFUSED/);
  });

  it('resend delivers the same event again; the test action sends a sample of the parser shape marked as a test', async ({
    hookServer,
    emulator,
  }) => {
    const hook = await hookServer();
    const s = await emulator(withHooks([{ url: hook.url, id: 'main' }]));
    await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(4)) });
    await hook.waitFor(1);
    const [d] = DeliveriesBody.parse((await call(s, 'GET', '/_emulator/deliveries')).body).deliveries;
    expect((await call(s, 'POST', `/_emulator/deliveries/${d!.delivery_id}/resend`)).status).toBe(200);
    await hook.waitFor(2);
    expect(hook.hits[1]!.body).toBe(hook.hits[0]!.body);

    const t = Delivery.parse((await call(s, 'POST', '/_emulator/integrations/main/test')).body);
    expect(t.test).toBe(true);
    await hook.waitFor(3);
    const sample = JSON.parse(hook.hits[2]!.body);
    expect(sample.test).toBe(true);
    expect(mirrorsDefinition(INVOICE_FIELDS, WebhookPayload.parse(sample).data)).toEqual({ ok: true });
    expect((await call(s, 'POST', '/_emulator/integrations/nope/test')).status).toBe(404);
  });

  it('fires no event for a document that ends in error', async ({ hookServer, emulator }) => {
    const hook = await hookServer();
    const s = await emulator(withHooks([{ url: hook.url }]));
    // Two documents that really end in error (reserved, failed, refunded): one inline, one by storage path.
    const inline = await call(s, 'POST', '/api/v1/extract', {
      headers: { prefer: 'code=500' },
      body: inlineBody(await invoicePdf(4)),
    });
    expect(inline.status).toBe(500);
    const t = UploadTicket.parse(
      (await call(s, 'POST', '/api/v1/upload-url', { body: { file_name: 'e.pdf', file_type: 'application/pdf' } }))
        .body,
    );
    await call(s, 'PUT', t.upload_url, {
      raw: await invoicePdf(7),
      key: null,
      headers: { 'content-type': 'application/pdf' },
    });
    const stored = await call(s, 'POST', '/api/v1/extract', {
      headers: { prefer: 'outcome=error' },
      body: { storage_path: t.storage_path },
    });
    expect(DocumentBody.parse((await waitForDocument(s, stored.body.document_id)).body).status).toBe('error');
    const docs = (await call(s, 'GET', '/_emulator/documents', { key: null })).body.documents as Array<{
      status: string;
    }>;
    expect(docs.map((d) => d.status)).toEqual(['error', 'error']);
    // Then one that completes: its event is the only one.
    const ok = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(5)) });
    await hook.waitFor(1);
    // The outbox holds every event the emulator meant to send, sent or not: only this one.
    const outbox = DeliveriesBody.parse((await call(s, 'GET', '/_emulator/deliveries', { key: null })).body);
    expect(outbox.deliveries.map((d) => d.document_id)).toEqual([ok.body.document_id]);
    expect(hook.hits).toHaveLength(1);
    expect(JSON.parse(hook.hits[0]!.body).document_id).toBe(ok.body.document_id);
  });

  it('delivers the outbox after the server is killed with SIGKILL and restarted', async ({
    hookServer,
    spawnServe,
  }) => {
    const hook = await hookServer();
    const port = hook.port;
    await hook.close();
    const dir = tempDir();
    const config = writeJson(dir, 'c.json', {
      ...DEFAULT_CONFIG,
      ...withHooks([{ url: `http://127.0.0.1:${port}/hook` }], 0.1),
    });
    const first = await spawnServe(['--config', config, '--data-dir', `${dir}/data`]);
    const r = await call(first, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(6)) });
    expect(r.status).toBe(200);
    await expect
      .poll(
        async () =>
          DeliveriesBody.parse((await call(first, 'GET', '/_emulator/deliveries')).body).deliveries[0]?.attempts.length,
      )
      .toBe(1);
    first.child.kill('SIGKILL');
    await first.child;
    const back = await hookServer({ port });
    const second = await spawnServe(['--config', config, '--data-dir', `${dir}/data`]);
    await back.waitFor(1, 10_000);
    expect(JSON.parse(back.hits[0]!.body).document_id).toBe(r.body.document_id);
    await expect
      .poll(
        async () =>
          DeliveriesBody.parse((await call(second, 'GET', '/_emulator/deliveries')).body).deliveries[0]?.state,
      )
      .toBe('delivered');
  });
});

describe('emulator: every way a document arrives', () => {
  const sourceOf = async (hook: HookServer, n: number) => {
    await hook.waitFor(n);
    return WebhookPayload.parse(JSON.parse(hook.hits[n - 1]!.body));
  };

  it('the application upload (multipart) arrives as source_type upload', async ({ hookServer, emulator }) => {
    const hook = await hookServer();
    const s = await emulator(withHooks([{ url: hook.url }]));
    const form = new FormData();
    form.append('file', new Blob([await invoicePdf(20)], { type: 'application/pdf' }), 'app.pdf');
    const res = await fetch(`${s.url}/_emulator/parsers/prs_invoices/documents`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { documents: Array<{ document_id: string; status: string }> };
    expect(body.documents[0]!.status).toBe('processing');
    const p = await sourceOf(hook, 1);
    expect(p.document_id).toBe(body.documents[0]!.document_id);
    expect(p.metadata).toMatchObject({ source_type: 'upload', file_name: 'app.pdf', mime_type: 'application/pdf' });
    expect((await waitForDocument(s, p.document_id)).body.status).toBe('completed');
  });

  it('the inbound webhook (JSON base64 and multipart) arrives as source_type webhook, and needs its token', async ({
    hookServer,
    emulator,
  }) => {
    const hook = await hookServer();
    const s = await emulator(withHooks([{ url: hook.url }]));
    const inbound = s.inboundUrls.get('prs_invoices')!;
    const json = await call(s, 'POST', inbound, { key: null, body: inlineBody(await invoicePdf(21), 'in.pdf') });
    expect(json.status).toBe(200);
    expect(json.body.status).toBe('processing');
    expect((await sourceOf(hook, 1)).metadata.source_type).toBe('webhook');
    const form = new FormData();
    form.append('file', new Blob([await invoicePdf(22)]), 'in2.pdf');
    expect((await fetch(inbound, { method: 'POST', body: form })).status).toBe(200);
    expect((await sourceOf(hook, 2)).metadata).toMatchObject({ source_type: 'webhook', file_name: 'in2.pdf' });
    expect(
      (
        await call(s, 'POST', inbound.replace(/[0-9a-f]{4}$/, '0000'), {
          key: null,
          body: inlineBody(await invoicePdf(23)),
        })
      ).status,
    ).toBe(404);
  });

  it('email with a PDF attachment, over a real SMTP conversation, arrives as source_type email', async ({
    hookServer,
    emulator,
  }) => {
    const hook = await hookServer();
    const s = await emulator(withHooks([{ url: hook.url }]), { smtpPort: 0 });
    const transport = mailer(s.smtpPort!);
    await transport.sendMail({
      from: 'ap@example.com',
      to: 'prs_invoices@localhost',
      subject: 'Invoice',
      text: 'attached',
      attachments: [{ filename: 'mailed.pdf', content: await invoicePdf(24), contentType: 'application/pdf' }],
    });
    const p = await sourceOf(hook, 1);
    expect(p.metadata).toMatchObject({ source_type: 'email', file_name: 'mailed.pdf', page_count: 1 });
    expect(p.data.invoice_number).toBe('INV-00024');
    await expect(transport.sendMail({ from: 'a@example.com', to: 'nobody@localhost', text: 'x' })).rejects.toThrow(
      /550/,
    );
  });
});
