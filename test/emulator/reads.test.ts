import { Agent, request as httpRequest } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { DocumentBody, ExtractInlineResponse, UploadTicket } from '../../src/contract/index.ts';
import type { ServerEvent } from '../../src/emulator/events.ts';
import { call, inlineBody, KEY, OTHER_KEY, TWO_PARSERS, waitForDocument } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * The read path of the emulated API (GET documents/{id}, the one polling clients hit; `npm run
 * bench` row 6): what it keeps between requests (finished documents' encoded bodies, the key a
 * connection authenticated with, Host verdicts) never changes an answer.
 */

/** Simulated processing waits for the test to open its gate: a document stays processing until then. */
const GATED_MS = 4321;
function gatedSleep() {
  const waiting: Array<() => void> = [];
  return {
    sleep: (ms: number) => (ms === GATED_MS ? new Promise<void>((resolve) => waiting.push(resolve)) : delay(ms)),
    /** Resolves once a document is held at the gate, then lets it through. */
    async open() {
      while (waiting.length === 0) await delay(5);
      waiting.shift()!();
    },
  };
}

async function submitStored(s: { url: string }, bytes: Buffer, headers: Record<string, string> = {}) {
  const t = UploadTicket.parse(
    (await call(s, 'POST', '/api/v1/upload-url', { body: { file_name: 'a.pdf', file_type: 'application/pdf' } })).body,
  );
  await call(s, 'PUT', t.upload_url, { raw: bytes, key: null, headers: { 'content-type': 'application/pdf' } });
  const r = await call(s, 'POST', '/api/v1/extract', { body: { storage_path: t.storage_path }, headers });
  expect(r.status).toBe(200);
  return r.body.document_id as string;
}

/** GET on one kept-alive connection (one socket for every request); says whether the socket was reused. */
function onOneConnection(url: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path: string, authorization?: string) =>
    new Promise<{ status: number; body: string; reused: boolean }>((resolve, reject) => {
      const req = httpRequest(`${url}${path}`, { agent, headers: authorization ? { authorization } : {} }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, reused: req.reusedSocket }));
      });
      req.on('error', reject).end();
    });
  return { get, close: () => agent.destroy() };
}

describe('emulator: document reads', () => {
  it('a document read while processing is read afresh once it finishes: never a stale processing', async ({
    emulator,
  }) => {
    const gate = gatedSleep();
    const s = await emulator(
      { processing: { ms_per_page: GATED_MS, concurrency: 2 } },
      { deps: { sleep: gate.sleep } },
    );
    const completing = await submitStored(s, await invoicePdf(1));
    const failing = await submitStored(s, await invoicePdf(2), { prefer: 'outcome=error' });
    for (const id of [completing, failing]) {
      for (let i = 0; i < 2; i++) {
        expect(DocumentBody.parse((await call(s, 'GET', `/api/v1/documents/${id}`)).body).status).toBe('processing');
      }
    }
    await gate.open();
    await gate.open();
    const done = DocumentBody.parse((await waitForDocument(s, completing)).body);
    expect(done.status).toBe('completed');
    expect(done.results?.invoice_number).toBe('INV-00001');
    const failed = DocumentBody.parse((await waitForDocument(s, failing)).body);
    expect(failed.status).toBe('error');
    // Read again (now from the kept body): the same answers, byte for byte.
    expect((await call(s, 'GET', `/api/v1/documents/${completing}`)).body).toEqual(done);
    expect((await call(s, 'GET', `/api/v1/documents/${failing}`)).body).toEqual(failed);
  });

  it("a kept body is only its own parser's: another key's read is 404, before and after it is kept", async ({
    emulator,
  }) => {
    const s = await emulator(TWO_PARSERS);
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(3)) });
    const id = ExtractInlineResponse.parse(r.body).document_id;
    expect((await call(s, 'GET', `/api/v1/documents/${id}`, { key: OTHER_KEY })).status).toBe(404);
    const first = await call(s, 'GET', `/api/v1/documents/${id}`);
    const kept = await call(s, 'GET', `/api/v1/documents/${id}`);
    expect(kept.status).toBe(200);
    expect(kept.body).toEqual(first.body);
    expect(kept.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((await call(s, 'GET', `/api/v1/documents/${id}`, { key: OTHER_KEY })).status).toBe(404);
  });

  it('a connection that authenticated once has every later key checked again: wrong, other, missing', async ({
    emulator,
  }) => {
    const s = await emulator(TWO_PARSERS);
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(4)) });
    const path = `/api/v1/documents/${ExtractInlineResponse.parse(r.body).document_id}`;
    const connection = onOneConnection(s.url);
    try {
      // The same length as the key, one character off: the comparison of equal lengths refuses it.
      const offByOne = `${KEY.slice(0, -1)}${KEY.endsWith('x') ? 'y' : 'x'}`;
      const steps: Array<[string | undefined, number]> = [
        [`Bearer ${KEY}`, 200],
        [`Bearer ${offByOne}`, 401],
        [`Bearer ${KEY}`, 200],
        [`Bearer ${OTHER_KEY}`, 404],
        [undefined, 401],
        [`Bearer ${KEY}x`, 401],
        [`bearer   ${KEY} `, 200],
        [`Bearer ${KEY}`, 200],
      ];
      const seen: Array<[string | undefined, number]> = [];
      for (const [i, [authorization]] of steps.entries()) {
        const answer = await connection.get(path, authorization);
        if (i > 0) expect(answer.reused).toBe(true);
        seen.push([authorization, answer.status]);
      }
      expect(seen).toEqual(steps);
    } finally {
      connection.close();
    }
  });

  it('faults and Prefer apply to a kept body as to any read; the log line names the document', async ({ emulator }) => {
    const events: ServerEvent[] = [];
    const s = await emulator({}, { events: (e) => events.push(e) });
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(5)) });
    const id = ExtractInlineResponse.parse(r.body).document_id;
    const path = `/api/v1/documents/${id}`;
    const first = await call(s, 'GET', path);
    expect(first.status).toBe(200);
    await call(s, 'POST', '/_emulator/faults', {
      body: { operation: 'documents', effect: { type: 'status', status: 503 }, times: 1 },
    });
    expect((await call(s, 'GET', path)).status).toBe(503);
    expect((await call(s, 'GET', path, { headers: { prefer: 'code=402' } })).status).toBe(402);
    // Without a key that authenticates, Prefer is not honoured: the route's 401 stands.
    expect((await call(s, 'GET', path, { key: 'ext_not_a_key', headers: { prefer: 'code=402' } })).status).toBe(401);
    const again = await call(s, 'GET', path);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const reads = events.filter((e) => e.type === 'request' && e.method === 'GET' && e.path === path);
    expect(reads.map((e) => e.type === 'request' && [e.status, e.document_id])).toEqual([
      [200, id],
      [503, undefined],
      [402, undefined],
      [401, undefined],
      [200, id],
    ]);
  });

  it("without a request log (serve -q: kept bodies answered before Fastify), a kept read is the route's answer, and faults, Prefer, Host and keys apply as ever", async ({
    emulator,
  }) => {
    const s = await emulator(TWO_PARSERS);
    const port = new URL(s.url).port;
    const r = await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(6)) });
    const id = ExtractInlineResponse.parse(r.body).document_id;
    const path = `/api/v1/documents/${id}`;
    const raw = async (target: string, headers: Record<string, string>) => {
      const res = await request(`${s.url}${target}`, { headers });
      return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
    };
    const auth = { authorization: `Bearer ${KEY}` };
    const first = await raw(path, auth);
    const kept = await raw(path, auth);
    expect(first.status).toBe(200);
    expect(kept).toEqual({ ...first, headers: { ...first.headers, date: kept.headers.date } });
    expect(kept.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(kept.headers['content-length']).toBe(String(Buffer.byteLength(first.text)));
    // A query string or an escaped id: the route's answer, the same body.
    expect((await raw(`${path}?x=1`, auth)).text).toBe(first.text);
    expect((await raw(path.replace(/_/, '%5F'), auth)).text).toBe(first.text);
    // Keys: another parser's 404, a wrong one 401, none 401.
    expect((await raw(path, { authorization: `Bearer ${OTHER_KEY}` })).status).toBe(404);
    expect((await raw(path, { authorization: 'Bearer ext_not_a_key' })).status).toBe(401);
    expect((await raw(path, {})).status).toBe(401);
    // The loopback guard: a Host naming another machine is refused, a kept body or not.
    expect((await raw(path, { ...auth, host: `evil.example:${port}` })).status).toBe(403);
    // Prefer, and a fault rule added at run time, until it is spent.
    expect((await raw(path, { ...auth, prefer: 'code=402' })).status).toBe(402);
    await call(s, 'POST', '/_emulator/faults', {
      body: { operation: 'documents', effect: { type: 'status', status: 503 }, times: 2 },
    });
    expect((await raw(path, auth)).status).toBe(503);
    expect((await raw(path, auth)).status).toBe(503);
    expect(await raw(path, auth)).toMatchObject({ status: 200, text: first.text });
    // A rule that fires now and then (probability) keeps every read going through the fault hooks.
    await call(s, 'POST', '/_emulator/faults', {
      body: { operation: 'documents', effect: { type: 'reset', when: 'before' }, probability: 0.5 },
    });
    const outcomes = new Set<string>();
    for (let i = 0; i < 30; i++) {
      try {
        outcomes.add(String((await raw(path, auth)).status));
      } catch {
        outcomes.add('reset');
      }
    }
    expect(outcomes).toEqual(new Set(['200', 'reset']));
    await call(s, 'DELETE', '/_emulator/faults');
    expect(await raw(path, auth)).toMatchObject({ status: 200, text: first.text });
  });

  it('a Host verdict is the same every time, past the number of Hosts remembered', async ({ emulator }) => {
    const s = await emulator();
    const port = new URL(s.url).port;
    const status = async (host: string) => {
      const res = await request(`${s.url}/api/v1/documents/doc_x`, {
        headers: { host, authorization: `Bearer ${KEY}` },
      });
      await res.body.dump();
      return res.statusCode;
    };
    const evil = `evil.example:${port}`;
    expect(await status(evil)).toBe(403);
    expect(await status(evil)).toBe(403);
    for (let i = 0; i < 100; i++) expect(await status(`rebound-${i}.example:${port}`)).toBe(403);
    expect(await status(evil)).toBe(403);
    expect(await status(`localhost:${port}`)).toBe(404);
    expect(await status(`127.0.0.1:${port}`)).toBe(404);
  });
});
