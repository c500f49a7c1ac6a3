import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Circuit, ServiceClient, ServiceError, type ClientDeps, type LogLevel } from '../../src/client/index.ts';

const BASE = 'http://service.test';
const KEY = 'ext_secret_key_for_tests_0001';

/** A fake clock: sleep advances time and records the delays asked for. */
function fakeDeps(agent: MockAgent): ClientDeps & { slept: number[]; lines: string[] } {
  let t = 1_000_000;
  const slept: number[] = [];
  const lines: string[] = [];
  return {
    dispatcher: agent,
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
    random: () => 0.5,
    log: (level: LogLevel, m: string) => lines.push(`${level} ${m}`),
    slept,
    lines,
  };
}

let agent: MockAgent;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
});
afterEach(async () => {
  await agent.close();
});

const doc = {
  document_id: 'doc_1',
  status: 'completed',
  file_name: 'a.pdf',
  page_count: 2,
  results: { total: 1 },
  error: null,
};

describe('service client', () => {
  it('an answer of the wrong shape is bad_response, naming each problem and its path in one line', async () => {
    agent
      .get(BASE)
      .intercept({ path: '/api/v1/documents/doc_1', method: 'GET' })
      .reply(200, { ...doc, status: 'done', page_count: 'two' });
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, fakeDeps(agent));
    const err = await client.getDocument('doc_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ kind: 'bad_response' });
    expect((err as ServiceError).message).toMatch(
      /^get for doc_1: HTTP 200 with an unexpected body \(Invalid option: expected one of .* at status; Invalid input: expected number, received string at page_count\)$/,
    );
  });

  it('results that are not an object (an array, a string) are bad_response; null results stay null', async () => {
    for (const results of [[{ total: 1 }], 'total: 1']) {
      agent
        .get(BASE)
        .intercept({ path: '/api/v1/documents/doc_1', method: 'GET' })
        .reply(200, { ...doc, results });
      const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, fakeDeps(agent));
      const err = await client.getDocument('doc_1').catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'bad_response' });
      expect((err as ServiceError).message).toContain('expected an object of results at results');
    }
    agent
      .get(BASE)
      .intercept({ path: '/api/v1/documents/doc_1', method: 'GET' })
      .reply(200, { ...doc, status: 'processing', page_count: null, results: null });
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, fakeDeps(agent));
    expect(await client.getDocument('doc_1')).toMatchObject({ results: null, page_count: null });
  });

  it('GET: retries 5xx and network errors with backoff, then succeeds', async () => {
    const pool = agent.get(BASE);
    pool.intercept({ path: '/api/v1/documents/doc_1', method: 'GET' }).reply(502, 'bad gateway');
    pool
      .intercept({ path: '/api/v1/documents/doc_1', method: 'GET' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    pool.intercept({ path: '/api/v1/documents/doc_1', method: 'GET' }).reply(200, { ...doc, extra: 'ignored' });
    const deps = fakeDeps(agent);
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps);
    const got = await client.getDocument('doc_1');
    expect(got.page_count).toBe(2);
    expect(deps.slept).toEqual([375, 750]);
  });

  it('429: honours Retry-After and tells the limiter', async () => {
    const pool = agent.get(BASE);
    pool
      .intercept({ path: '/api/v1/upload-url', method: 'POST' })
      .reply(429, { error: 'slow down' }, { headers: { 'retry-after': '7' } });
    pool
      .intercept({ path: '/api/v1/upload-url', method: 'POST' })
      .reply(200, { upload_url: '/s/x?sig=ab', storage_path: 'p/a.pdf', expires_in: 900 });
    const deps = fakeDeps(agent);
    let limited = 0;
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY, hooks: { rateLimited: () => limited++ } }, deps);
    const ticket = await client.uploadUrl({ file_name: 'a.pdf', file_type: 'application/pdf' });
    expect(ticket.storage_path).toBe('p/a.pdf');
    expect(deps.slept).toEqual([7000]);
    expect(limited).toBe(1);
  });

  it('POST extract is not sent again once it may have reached the service', async () => {
    const pool = agent.get(BASE);
    pool
      .intercept({ path: '/api/v1/extract', method: 'POST' })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'UND_ERR_SOCKET' }));
    const deps = fakeDeps(agent);
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps);
    const err = await client.extractStored({ storage_path: 'p/a.pdf', file_name: 'a.pdf' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).kind).toBe('network');
    expect((err as ServiceError).message).toMatch(/charged twice/);
    expect(deps.slept).toEqual([]);
  });

  it('POST extract: a 502 is not retried either (the extraction may be running)', async () => {
    agent.get(BASE).intercept({ path: '/api/v1/extract', method: 'POST' }).reply(502, '<html>proxy</html>');
    const deps = fakeDeps(agent);
    const err = await new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps)
      .extractStored({ storage_path: 'p' })
      .catch((e: unknown) => e);
    expect((err as ServiceError).kind).toBe('server');
    expect(deps.slept).toEqual([]);
  });

  it("POST extract: the service's own 500 (a JSON error body, refunded per the spec) is sent again", async () => {
    const pool = agent.get(BASE);
    pool
      .intercept({ path: '/api/v1/extract', method: 'POST' })
      .reply(500, { success: false, error: 'extraction failed', code: 'extraction_failed' });
    pool
      .intercept({ path: '/api/v1/extract', method: 'POST' })
      .reply(200, { success: true, document_id: 'doc_9', status: 'processing', poll_url: '/api/v1/documents/doc_9' });
    const deps = fakeDeps(agent);
    const accepted = await new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps).extractStored({ storage_path: 'p' });
    expect(accepted.document_id).toBe('doc_9');
    expect(deps.slept).toEqual([375]);
  });

  it("POST extract: a 500 that is not the service's JSON (a proxy's page), a 502 or a dropped answer may have been charged", async () => {
    const pool = agent.get(BASE);
    pool
      .intercept({ path: '/api/v1/extract', method: 'POST' })
      .reply(500, '<html><body>Internal Server Error</body></html>');
    pool.intercept({ path: '/api/v1/extract', method: 'POST' }).reply(504, { error: 'gateway timeout' });
    pool
      .intercept({ path: '/api/v1/extract', method: 'POST' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const deps = fakeDeps(agent);
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps);
    for (let i = 0; i < 3; i++) {
      const err = (await client.extractStored({ storage_path: 'p' }).catch((e: unknown) => e)) as ServiceError;
      expect(err.charge).toBe('uncertain');
    }
    expect(deps.slept).toEqual([]);
  });

  it('POST extract: no connection at all is retried, and after the budget costs nothing', async () => {
    const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    agent.get(BASE).intercept({ path: '/api/v1/extract', method: 'POST' }).replyWithError(refused()).times(6);
    const deps = fakeDeps(agent);
    const err = (await new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps)
      .extractStored({ storage_path: 'p' })
      .catch((e: unknown) => e)) as ServiceError;
    expect(err.kind).toBe('network');
    expect(err.charge).toBe('none');
    expect(deps.slept).toHaveLength(5);
  });

  it('the circuit opens after 5 unanswered attempts over 5 s, and then nothing more is sent', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    agent.get(BASE).intercept({ path: '/api/v1/upload-url', method: 'POST' }).replyWithError(refused).persist();
    const deps = fakeDeps(agent);
    const circuit = new Circuit(deps.now);
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY, circuit }, deps);
    const err = (await client
      .uploadUrl({ file_name: 'a.pdf', file_type: 'application/pdf' })
      .catch((e: unknown) => e)) as ServiceError;
    expect(err.kind).toBe('unreachable');
    expect(err.message).toContain(BASE);
    expect(circuit.isOpen).toBe(true);
    // 375 + 750 + 1500 + 3000 ms of backoff: the fifth failure is the first 5 s after the first.
    expect(deps.slept).toEqual([375, 750, 1500, 3000]);
    const next = (await client.getDocument('doc_1').catch((e: unknown) => e)) as ServiceError;
    expect(next.kind).toBe('unreachable');
  });

  it('types the documented errors: 401 auth, 402 credits, inline 503 fallback', async () => {
    const pool = agent.get(BASE);
    pool.intercept({ path: '/api/v1/extract', method: 'POST' }).reply(401, { message: `bad key ${KEY}` });
    pool.intercept({ path: '/api/v1/extract', method: 'POST' }).reply(402, { error: 'no credits' });
    pool.intercept({ path: '/api/v1/extract', method: 'POST' }).reply(503, 'timeout');
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, fakeDeps(agent));
    const inline = { file: { data: 'AAAA', name: 'a.pdf', type: 'application/pdf' } };
    const auth = (await client.extractInline(inline).catch((e: unknown) => e)) as ServiceError;
    expect(auth.kind).toBe('auth');
    expect(auth.message).not.toContain(KEY);
    expect(((await client.extractInline(inline).catch((e: unknown) => e)) as ServiceError).kind).toBe('out_of_credits');
    expect(((await client.extractInline(inline).catch((e: unknown) => e)) as ServiceError).kind).toBe(
      'inline_unavailable',
    );
  });

  it('reads unknown error bodies: error, message, or a short excerpt', async () => {
    const pool = agent.get(BASE);
    pool
      .intercept({ path: '/api/v1/documents/x', method: 'GET' })
      .reply(404, { error: { message: 'no such document' } });
    pool.intercept({ path: '/api/v1/documents/y', method: 'GET' }).reply(400, 'x'.repeat(1000));
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, fakeDeps(agent));
    const a = (await client.getDocument('x').catch((e: unknown) => e)) as ServiceError;
    expect(a.kind).toBe('not_found');
    expect(a.message).toContain('no such document');
    const b = (await client.getDocument('y').catch((e: unknown) => e)) as ServiceError;
    expect(b.message.length).toBeLessThan(400);
  });

  it('accepts any 2xx and a document without optional fields', async () => {
    agent
      .get(BASE)
      .intercept({ path: '/api/v1/documents/doc_2', method: 'GET' })
      .reply(203, { document_id: 'doc_2', status: 'processing' });
    const got = await new ServiceClient({ baseUrl: BASE, apiKey: KEY }, fakeDeps(agent)).getDocument('doc_2');
    expect(got).toMatchObject({ status: 'processing', page_count: null, results: null, error: null });
  });

  describe('PUT', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'client-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('streams the file with the declared type, no Authorization, and re-opens it on retry', async () => {
      const path = join(dir, 'a.pdf');
      await writeFile(path, '%PDF-1.4 hello');
      const seen: Array<{ auth: unknown; type: unknown; body: string }> = [];
      const storage = agent.get('http://storage.test');
      const record = (opts: { headers?: unknown; body?: unknown }): string => {
        const h = new Headers(opts.headers as Record<string, string>);
        seen.push({ auth: h.get('authorization'), type: h.get('content-type'), body: '' });
        return '';
      };
      storage.intercept({ path: (p) => p.startsWith('/up/a.pdf'), method: 'PUT' }).reply(503, (o) => record(o));
      storage.intercept({ path: (p) => p.startsWith('/up/a.pdf'), method: 'PUT' }).reply(200, (o) => record(o));
      const deps = fakeDeps(agent);
      const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps);
      await client.putBytes(
        { upload_url: 'http://storage.test/up/a.pdf?sig=abc', storage_path: 'a', expires_in: 60 },
        { path, name: 'a.pdf', size: 14, type: 'application/pdf' },
      );
      expect(seen).toHaveLength(2);
      for (const s of seen) {
        expect(s.auth).toBeNull();
        expect(s.type).toBe('application/pdf');
      }
      expect(deps.lines.join('\n')).not.toContain('sig=abc');
    });

    it('a refused upload address is an expired ticket', async () => {
      const path = join(dir, 'a.pdf');
      await writeFile(path, 'x');
      agent
        .get('http://storage.test')
        .intercept({ path: (p) => p.startsWith('/up'), method: 'PUT' })
        .reply(403, { error: 'the upload address has expired' });
      const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, fakeDeps(agent));
      const err = (await client
        .putBytes(
          { upload_url: 'http://storage.test/up?sig=1', storage_path: 'a', expires_in: 1 },
          { path, name: 'a.pdf', size: 1, type: 'text/plain' },
        )
        .catch((e: unknown) => e)) as ServiceError;
      expect(err.kind).toBe('ticket_expired');
    });
  });
});
