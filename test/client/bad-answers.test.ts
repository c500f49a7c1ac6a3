import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ANSWER_DEPTH, nestsDeeperThan, topLevelScalars } from '../../src/client/answer-depth.ts';
import { ServiceClient, ServiceError, type ClientDeps } from '../../src/client/index.ts';

/** Answers the client cannot hold (too deep, pages that are not a count) and base URLs that are not the service. */

const BASE = 'http://service.test';
const KEY = 'ext_secret_key_for_tests_0001';
const inline = { file: { data: 'JVBERi0=', name: 'a.pdf', type: 'application/pdf' } };

function deps(agent: MockAgent): ClientDeps {
  let t = 0;
  return {
    dispatcher: agent,
    now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
    random: () => 0.5,
    log: () => {},
  };
}

const nested = (depth: number): string => `${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`;

let agent: MockAgent;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
});
afterEach(async () => {
  await agent.close();
});

async function failure(p: Promise<unknown>): Promise<ServiceError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ServiceError)) throw new Error(`expected a ServiceError, got ${String(err)}`);
  return err;
}

describe('the depth scan', () => {
  it('counts only brackets outside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4), 3)).toBe(true);
    expect(nestsDeeperThan(`{"a":"[[[[[[\\"{{{{"}`, 1)).toBe(false);
    expect(nestsDeeperThan(nested(200_000), MAX_ANSWER_DEPTH)).toBe(true);
  });

  it('reads the top-level scalars around nested values without parsing them', () => {
    const text = `{"results":${nested(1000)},"document_id":"doc_\\"1","page_count":3,"x":[1,{"document_id":"inner"}],"ok":true}`;
    expect(topLevelScalars(text)).toEqual({ document_id: 'doc_"1', page_count: 3, ok: true });
  });
});

describe('answers the client cannot hold', () => {
  it('an inline answer nested 200,000 deep: bad_response, may be charged, naming its document and pages', async () => {
    const body = `{"success":true,"parser_id":"p","document_id":"doc_9","page_count":2,"results":${nested(200_000)}}`;
    agent.get(BASE).intercept({ path: '/api/v1/extract', method: 'POST' }).reply(200, body);
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent)).extractInline(inline));
    expect(err).toMatchObject({ kind: 'bad_response', charge: 'uncertain', documentId: 'doc_9', pageCount: 2 });
    expect(err.message).toMatch(/nested deeper than 64 levels/);
  });

  it('a document GET nested too deep names the document asked for', async () => {
    agent
      .get(BASE)
      .intercept({ path: '/api/v1/documents/doc_3', method: 'GET' })
      .reply(200, `{"status":"completed","results":${nested(100)}}`);
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent)).getDocument('doc_3'));
    expect(err).toMatchObject({ kind: 'bad_response', charge: 'none', documentId: 'doc_3' });
  });

  it.each([['1e300'], ['-1'], ['1.5'], ['"3"'], ['9007199254740993']])(
    'an inline page_count of %s is bad_response with its document_id, not a page count',
    async (pages) => {
      agent
        .get(BASE)
        .intercept({ path: '/api/v1/extract', method: 'POST' })
        .reply(200, `{"success":true,"document_id":"doc_1","results":{},"page_count":${pages}}`);
      const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent)).extractInline(inline));
      expect(err).toMatchObject({
        kind: 'bad_response',
        charge: 'uncertain',
        documentId: 'doc_1',
        pageCount: undefined,
      });
      expect(err.message).toMatch(/page_count .* which is not a number of pages/);
    },
  );

  it('a page_count of 0 or null is a page count (or none): accepted', async () => {
    for (const pages of ['0', 'null']) {
      agent
        .get(BASE)
        .intercept({ path: '/api/v1/extract', method: 'POST' })
        .reply(200, `{"success":true,"document_id":"doc_1","results":{},"page_count":${pages}}`);
      const answer = await new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent)).extractInline(inline);
      expect(answer.document_id).toBe('doc_1');
    }
  });
});

describe('a base URL that is not the service', () => {
  it('a 404 on upload-url with /api/v1 in the base URL: wrong_service, hinting at the doubled path', async () => {
    agent.get(BASE).intercept({ path: '/api/v1/api/v1/upload-url', method: 'POST' }).reply(404, 'Not Found');
    const client = new ServiceClient({ baseUrl: `${BASE}/api/v1`, apiKey: KEY }, deps(agent));
    const err = await failure(client.uploadUrl({ file_name: 'a.pdf', file_type: 'application/pdf' }));
    expect(err).toMatchObject({ kind: 'wrong_service', charge: 'none', retryable: false });
    expect(err.message).toMatch(/\/api\/v1 twice: drop it from the base URL/);
  });

  it('a 404 on the inline extract: wrong_service, hinting at the host', async () => {
    agent.get(BASE).intercept({ path: '/api/v1/extract', method: 'POST' }).reply(404, '{"error":"no route"}');
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent)).extractInline(inline));
    expect(err).toMatchObject({ kind: 'wrong_service', charge: 'none' });
    expect(err.message).toMatch(/wrong host or port\?/);
  });

  it('an HTML page, whatever its status below 500: wrong_service; a proxy 502 page is not', async () => {
    agent
      .get(BASE)
      .intercept({ path: '/api/v1/documents/doc_1', method: 'GET' })
      .reply(200, '<html></html>', { headers: { 'content-type': 'text/html' } });
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent));
    expect(await failure(client.getDocument('doc_1'))).toMatchObject({ kind: 'wrong_service' });
    agent
      .get(BASE)
      .intercept({ path: '/api/v1/extract', method: 'POST' })
      .reply(502, '<html>Bad Gateway</html>', { headers: { 'content-type': 'text/html' } });
    const fresh = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent));
    expect(await failure(fresh.extractInline(inline))).toMatchObject({ kind: 'server', charge: 'uncertain' });
  });

  it('a 404 of GET documents/{id} is an unknown document, not a wrong service', async () => {
    agent.get(BASE).intercept({ path: '/api/v1/documents/nope', method: 'GET' }).reply(404, '{"error":"unknown"}');
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent)).getDocument('nope'));
    expect(err.kind).toBe('not_found');
  });

  it('until the service has answered once, requests go one at a time: a wrong service costs one request', async () => {
    let requests = 0;
    agent
      .get(BASE)
      .intercept({ path: '/api/v1/extract', method: 'POST' })
      .reply(() => {
        requests++;
        return { statusCode: 404, data: 'Not Found' };
      })
      .persist();
    const client = new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps(agent));
    const errors = await Promise.all(Array.from({ length: 8 }, () => failure(client.extractInline(inline))));
    expect(errors.every((e) => e.kind === 'wrong_service')).toBe(true);
    expect(requests).toBe(1);
  });
});
