import { existsSync, readdirSync } from 'node:fs';
import { describe, expect } from 'vitest';
import {
  DocumentBody,
  ErrorBody,
  ExtractAcceptedResponse,
  ExtractInlineResponse,
  LedgerBody,
  UploadTicket,
  mirrorsDefinition,
} from '../../src/contract/index.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import type { Engine } from '../../src/engine/types.ts';
import { tempDir } from '../helpers/cli.ts';
import { call, inlineBody, KEY, OTHER_KEY, TWO_PARSERS, waitForDocument } from '../helpers/emulator.ts';
import { invoicePdf, makePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

function expectError(r: { status: number; body: unknown }, status: number, code?: string) {
  expect(r.status).toBe(status);
  const body = ErrorBody.parse(r.body);
  expect(body.error.length).toBeGreaterThan(10);
  if (code) expect(body.code).toBe(code);
  return body;
}

/** The three steps of the upload-and-poll route; returns the ticket and the PUT's reply. */
async function upload(server: { url: string }, bytes: Buffer, name = 'scan.pdf', type = 'application/pdf', key = KEY) {
  const t = await call(server, 'POST', '/api/v1/upload-url', { body: { file_name: name, file_type: type }, key });
  expect(t.status).toBe(200);
  const ticket = UploadTicket.parse(t.body);
  const put = await call(server, 'PUT', ticket.upload_url, {
    raw: bytes,
    key: null,
    headers: { 'content-type': type },
  });
  return { ticket, put };
}

describe('emulator: authentication', () => {
  it('refuses a missing, malformed or unknown key with 401 and a JSON error', async ({ emulator }) => {
    const s = await emulator();
    expectError(await call(s, 'GET', '/api/v1/documents/doc_x', { key: null }), 401, 'unauthorized');
    expectError(await call(s, 'GET', '/api/v1/documents/doc_x', { headers: { authorization: `Token ${KEY}` } }), 401);
    expectError(await call(s, 'GET', '/api/v1/documents/doc_x', { key: 'ext_not_a_known_key_at_all' }), 401);
    const body = expectError(
      await call(s, 'POST', '/api/v1/upload-url', {
        key: 'ext_secret_guess_123456',
        body: { file_name: 'a.pdf', file_type: 'application/pdf' },
      }),
      401,
    );
    expect(JSON.stringify(body)).not.toContain('ext_secret_guess_123456');
  });

  it("a key sees only its own parser's documents and storage paths", async ({ emulator }) => {
    const s = await emulator(TWO_PARSERS);
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(1)) });
    expect(r.status).toBe(200);
    const id = ExtractInlineResponse.parse(r.body).document_id;
    expect((await call(s, 'GET', `/api/v1/documents/${id}`)).status).toBe(200);
    expectError(await call(s, 'GET', `/api/v1/documents/${id}`, { key: OTHER_KEY }), 404, 'not_found');
    const { ticket } = await upload(s, await invoicePdf(2));
    expectError(
      await call(s, 'POST', '/api/v1/extract', { key: OTHER_KEY, body: { storage_path: ticket.storage_path } }),
      404,
    );
  });
});

describe('emulator: signed uploads', () => {
  it('issues a ticket whose storage path ends in the sanitised file name', async ({ emulator }) => {
    const s = await emulator({ upload: { expires_in: 120 } });
    const r = await call(s, 'POST', '/api/v1/upload-url', {
      body: { file_name: '../../etc/pass wd?.pdf', file_type: 'application/pdf' },
    });
    const ticket = UploadTicket.parse(r.body);
    expect(ticket.expires_in).toBe(120);
    expect(ticket.storage_path.split('/')).toHaveLength(3);
    expect(ticket.storage_path.endsWith('/pass wd_.pdf')).toBe(true);
    expect(ticket.storage_path).not.toContain('..');
  });

  it('requires file_name and file_type', async ({ emulator }) => {
    const s = await emulator();
    const body = expectError(
      await call(s, 'POST', '/api/v1/upload-url', { body: { file_name: 'a.pdf' } }),
      400,
      'invalid_request',
    );
    expect(body.error).toContain('file_type');
  });

  it('takes the PUT without an API key, and a repeated PUT until submission, then 409', async ({ emulator }) => {
    const s = await emulator();
    const bytes = await invoicePdf(3);
    const { ticket, put } = await upload(s, bytes);
    expect(put.status).toBe(200);
    expect(put.body.size).toBe(bytes.length);
    const again = await call(s, 'PUT', ticket.upload_url, {
      raw: bytes,
      key: null,
      headers: { 'content-type': 'application/pdf' },
    });
    expect(again.status).toBe(200);
    const ex = await call(s, 'POST', '/api/v1/extract', {
      body: {
        storage_path: ticket.storage_path,
        file_name: 'scan.pdf',
        file_type: 'application/pdf',
        file_size: bytes.length,
      },
    });
    expect(ex.status).toBe(200);
    expectError(
      await call(s, 'PUT', ticket.upload_url, {
        raw: bytes,
        key: null,
        headers: { 'content-type': 'application/pdf' },
      }),
      409,
      'conflict',
    );
  });

  it('refuses a Content-Type other than the declared file_type, another method, and a tampered signature with 403', async ({
    emulator,
  }) => {
    const s = await emulator();
    const t = UploadTicket.parse(
      (await call(s, 'POST', '/api/v1/upload-url', { body: { file_name: 'a.pdf', file_type: 'application/pdf' } }))
        .body,
    );
    const wrongType = expectError(
      await call(s, 'PUT', t.upload_url, {
        raw: 'x',
        key: null,
        headers: { 'content-type': 'application/octet-stream' },
      }),
      403,
      'upload_forbidden',
    );
    expect(wrongType.error).toContain('application/pdf');
    expectError(await call(s, 'PUT', t.upload_url, { raw: 'x', key: null }), 403);
    expect(
      (await call(s, 'POST', t.upload_url, { raw: 'x', key: null, headers: { 'content-type': 'application/pdf' } }))
        .status,
    ).toBe(403);
    const tampered = t.upload_url.replace(/sig=([0-9a-f])/, (_m, c: string) => `sig=${c === '0' ? '1' : '0'}`);
    expect(
      expectError(
        await call(s, 'PUT', tampered, { raw: 'x', key: null, headers: { 'content-type': 'application/pdf' } }),
        403,
      ).error,
    ).toContain('signature');
    const longer = t.upload_url.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 3600}`);
    expectError(
      await call(s, 'PUT', longer, { raw: 'x', key: null, headers: { 'content-type': 'application/pdf' } }),
      403,
    );
  });

  it('refuses an expired upload address with 403 that says to request a new one', async ({ emulator }) => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const s = await emulator({ upload: { expires_in: 60 } }, { deps: { now: () => now } });
    const t = UploadTicket.parse(
      (await call(s, 'POST', '/api/v1/upload-url', { body: { file_name: 'a.pdf', file_type: 'application/pdf' } }))
        .body,
    );
    now += 61_000;
    const body = expectError(
      await call(s, 'PUT', t.upload_url, { raw: 'x', key: null, headers: { 'content-type': 'application/pdf' } }),
      403,
    );
    expect(body.error).toMatch(/expired/);
  });
});

describe('emulator: extract', () => {
  it('answers the inline shape synchronously with results that mirror the Field definition', async ({ emulator }) => {
    const s = await emulator();
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(7)) });
    expect(r.status).toBe(200);
    const body = ExtractInlineResponse.parse(r.body);
    expect(body.success).toBe(true);
    expect(body.parser_id).toBe('prs_invoices');
    expect(mirrorsDefinition(INVOICE_FIELDS, body.results)).toEqual({ ok: true });
    expect(body.results.invoice_number).toBe('INV-00007');
    expect(body.results.total).toBe(107);
    expect(body.results.due_date).toBeNull();
  });

  it('answers the storage_path shape at once with processing, even for a tiny file, then completes', async ({
    emulator,
  }) => {
    const s = await emulator({ processing: { ms_per_page: 200, concurrency: 1 } });
    const bytes = await invoicePdf(8);
    const { ticket } = await upload(s, bytes);
    const r = await call(s, 'POST', '/api/v1/extract', {
      body: {
        storage_path: ticket.storage_path,
        file_name: 'scan.pdf',
        file_type: 'application/pdf',
        file_size: bytes.length,
      },
    });
    expect(r.status).toBe(200);
    const accepted = ExtractAcceptedResponse.parse(r.body);
    expect(accepted.status).toBe('processing');
    expect(accepted.poll_url).toBe(`/api/v1/documents/${accepted.document_id}`);
    const first = DocumentBody.parse((await call(s, 'GET', accepted.poll_url)).body);
    expect(first.status).toBe('processing');
    const done = DocumentBody.parse((await waitForDocument(s, accepted.document_id)).body);
    expect(done).toMatchObject({ status: 'completed', file_name: 'scan.pdf', page_count: 1, error: null });
    expect(done.results?.invoice_number).toBe('INV-00008');
  });

  it('refuses both shapes, neither shape, bad base64, and a wrong file_size with 400', async ({ emulator }) => {
    const s = await emulator();
    const both = expectError(
      await call(s, 'POST', '/api/v1/extract', {
        body: { ...inlineBody(Buffer.from('x')), storage_path: 'a/b/c.pdf' },
      }),
      400,
    );
    expect(both.error).toContain('not both');
    expectError(await call(s, 'POST', '/api/v1/extract', { body: {} }), 400, 'invalid_request');
    expectError(
      await call(s, 'POST', '/api/v1/extract', { body: { file: { data: '%%%not base64', name: 'a.pdf' } } }),
      400,
    );
    expectError(await call(s, 'POST', '/api/v1/extract', { body: { file: { name: 'a.pdf' } } }), 400);
    const bytes = await invoicePdf(9);
    const { ticket } = await upload(s, bytes);
    expectError(
      await call(s, 'POST', '/api/v1/extract', {
        body: { storage_path: ticket.storage_path, file_size: bytes.length + 1 },
      }),
      400,
    );
  });

  it('refuses a storage_path never issued, or not yet uploaded, with a 4xx that says what to do', async ({
    emulator,
  }) => {
    const s = await emulator();
    expectError(
      await call(s, 'POST', '/api/v1/extract', { body: { storage_path: 'prs_invoices/upl_nope/a.pdf' } }),
      404,
    );
    const t = UploadTicket.parse(
      (await call(s, 'POST', '/api/v1/upload-url', { body: { file_name: 'a.pdf', file_type: 'application/pdf' } }))
        .body,
    );
    const body = expectError(
      await call(s, 'POST', '/api/v1/extract', { body: { storage_path: t.storage_path } }),
      409,
      'upload_missing',
    );
    expect(body.error).toContain('PUT');
  });

  it('answers 413 for a body over inline.max_body_bytes, 415 for a non-JSON body, 400 for broken JSON', async ({
    emulator,
  }) => {
    const s = await emulator({ inline: { timeout_ms: 30_000, max_body_bytes: 50_000 } });
    expectError(
      await call(s, 'POST', '/api/v1/extract', { body: inlineBody(Buffer.alloc(60_000, 1)) }),
      413,
      'payload_too_large',
    );
    expectError(
      await call(s, 'POST', '/api/v1/extract', {
        raw: 'file=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    expectError(
      await call(s, 'POST', '/api/v1/extract', { raw: '{"file": ', headers: { 'content-type': 'application/json' } }),
      400,
    );
  });

  it('answers 503 when inline extraction outlasts inline.timeout_ms, refunds, and stops the engine', async ({
    emulator,
  }) => {
    // Counting answers at once, extraction never does: the deadline lands after the reserve.
    let aborted = false;
    const engine: Engine = {
      countPages: async () => 1,
      extract: (_input, options) =>
        new Promise((_resolve, reject) => {
          options?.signal?.addEventListener('abort', () => {
            aborted = true;
            reject(options.signal!.reason);
          });
        }),
      close: async () => {},
    };
    const s = await emulator({ inline: { timeout_ms: 200, max_body_bytes: 10_000_000 } }, { engine });
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(10)) });
    expectError(r, 503, 'inline_timeout');
    const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
    expect(ledger.entries.map((e) => e.kind)).toEqual(['reserve', 'refund']);
    expect(ledger.balance).toBe(1000);
    expect(aborted).toBe(true);
  });

  it('answers 422 for an unreadable inline document and charges nothing; async: status error, nothing charged', async ({
    emulator,
  }) => {
    const s = await emulator();
    const corrupt = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200, 0x41)]);
    expectError(await call(s, 'POST', '/api/v1/extract', { body: inlineBody(corrupt) }), 422, 'unreadable_document');
    const { ticket } = await upload(s, corrupt, 'broken.pdf');
    const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } });
    expect(r.status).toBe(200);
    const doc = DocumentBody.parse((await waitForDocument(s, r.body.document_id)).body);
    expect(doc.status).toBe('error');
    expect(doc.error).toBeTruthy();
    expect(doc.results).toBeNull();
    const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
    expect(ledger).toEqual({ balance: 1000, entries: [] });
  });
});

describe('emulator: credits', () => {
  it('charges one credit per real page and answers 402 with a JSON body when the balance cannot cover a document', async ({
    emulator,
  }) => {
    const s = await emulator({ credits: 5 });
    const three = await invoicePdf(11, 3);
    const r1 = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(three) });
    expect(r1.status).toBe(200);
    const r2 = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(three) });
    expect(expectError(r2, 402, 'insufficient_credits').error).toMatch(/3 page/);
    const { ticket } = await upload(s, three);
    expectError(await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } }), 402);
    const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
    expect(ledger.balance).toBe(2);
    expect(ledger.entries).toHaveLength(1);
    expect(ledger.entries[0]).toMatchObject({
      kind: 'reserve',
      pages: 3,
      document_id: r1.body.document_id,
      file_name: 'invoice.pdf',
    });
    expect(ledger.entries[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
    // After a top-up the refused upload can be submitted: it was never marked submitted.
    expect((await call(s, 'POST', '/_emulator/credits', { body: { pages: 10 } })).body).toEqual({ balance: 12 });
    expect((await call(s, 'POST', '/api/v1/extract', { body: { storage_path: ticket.storage_path } })).status).toBe(
      200,
    );
  });

  it('never lets concurrent submissions take the balance below zero', async ({ emulator }) => {
    const s = await emulator({ credits: 10 });
    const pdfs = await Promise.all(Array.from({ length: 25 }, (_, i) => invoicePdf(100 + i)));
    const replies = await Promise.all(pdfs.map((p) => call(s, 'POST', '/api/v1/extract', { body: inlineBody(p) })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    expect(replies.filter((r) => r.status === 402)).toHaveLength(15);
    const ledger = LedgerBody.parse((await call(s, 'GET', '/_emulator/ledger')).body);
    expect(ledger.balance).toBe(0);
    expect(new Set(ledger.entries.map((e) => e.document_id)).size).toBe(10);
  });
});

describe('emulator: never a 5xx for a client mistake', () => {
  it('answers unknown routes and odd ids with JSON 4xx', async ({ emulator }) => {
    const s = await emulator();
    expectError(await call(s, 'GET', '/api/v2/documents/x'), 404);
    expectError(await call(s, 'GET', `/api/v1/documents/${'%2e%2e%2f'.repeat(20)}`), 404);
    expectError(await call(s, 'DELETE', '/api/v1/documents/x'), 404);
  });

  it('keeps every stored byte inside the data directory', async ({ emulator }) => {
    const { join } = await import('node:path');
    const dataDir = tempDir();
    const s = await emulator({}, { dataDir });
    for (const name of ['../../../evil.pdf', '/etc/passwd', '..\\..\\win.pdf', '....//x.pdf', '\u0000.pdf']) {
      const { put } = await upload(s, await makePdf([['x']]), name);
      expect(put.status).toBe(200);
    }
    expect(existsSync(join(dataDir, '..', 'evil.pdf'))).toBe(false);
    expect(readdirSync(join(dataDir, 'blobs'))).toHaveLength(5);
  });
});
