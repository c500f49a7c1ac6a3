import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { INBOX_FILE } from '../../src/receiver/index.ts';
import { tempDir } from '../helpers/cli.ts';
import { it, type StartReceiver } from './helpers.ts';

/**
 * `extract listen` against the webhooks of the service as deployed (its source, checked): one
 * pasted "Base64 Credentials" value sent as `Basic <value>`, `User-Agent: Parsli/1.0`, data keyed
 * by field ids (UUIDs), a test action whose document_id is `test-<ms>` and which has no `test`
 * field, and no retry after any 4xx (so a 4xx loses the event).
 */

const USER = 'parsli';
const PASSWORD = 'pw-deployed-Secret-7';
/** What docs/listen.md has the user paste as "Base64 Credentials": `printf '%s' "parsli:$EXTRACT_LISTEN_PASSWORD" | base64`. */
const BASE64_CREDENTIALS = Buffer.from(`${USER}:${PASSWORD}`, 'utf8').toString('base64');

const FIELD_INVOICE = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const FIELD_TOTAL = '0b8a1c52-3f1e-4a8e-9d4e-2b1c6f0e9a11';

/** A document.processed as the deployed service sends it: ids for keys, its own UUIDs for ids. */
function deployedEvent(documentId: string, data: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event: 'document.processed',
    parser_id: 'a3f1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b',
    parser_name: 'Invoices',
    document_id: documentId,
    timestamp: '2026-04-02T10:20:30.123Z',
    data: { [FIELD_INVOICE]: 'INV-7', [FIELD_TOTAL]: 42.5, ...data },
    metadata: { file_name: 'invoice.pdf', mime_type: 'application/pdf', source_type: 'api', page_count: 1 },
  };
}

/** The integration's test action: sample data, `document_id: "test-<ms>"`, no `test` field. */
const TEST_ACTION = {
  ...deployedEvent('test-1775125230123'),
  metadata: { file_name: 'sample.pdf', mime_type: 'application/pdf', source_type: 'test', page_count: 1 },
};

/** POSTs as the deployed sender does: its headers, real HTTP. */
async function deliver(url: string, body: unknown, init: { raw?: string; authorization?: string } = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Parsli/1.0',
      authorization: init.authorization ?? `Basic ${BASE64_CREDENTIALS}`,
    },
    body: init.raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* the test asserts on the text */
  }
  return { status: res.status, body: parsed as Record<string, unknown> };
}

function rowsOf(dataDir: string, sql: string): Record<string, unknown>[] {
  const db = new DatabaseSync(join(dataDir, INBOX_FILE), { readOnly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

const jsonl = async (path: string): Promise<{ document_id: string; results: Record<string, unknown> }[]> =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

async function deployedReceiver(receiver: StartReceiver) {
  const out = join(tempDir(), 'records.jsonl');
  const r = await receiver({ auth: { type: 'basic', username: USER, password: PASSWORD }, out });
  return Object.assign(r, { out });
}

describe('listen: the webhooks of the deployed service', () => {
  it('listen: the deployed test action (document_id test-<ms>, no test field) is logged as a test, answered 200, and leaves no record and no dedupe entry', async ({
    receiver,
  }) => {
    const r = await deployedReceiver(receiver);
    const test = await deliver(r.url, TEST_ACTION);
    expect(test.status).toBe(200);
    expect(test.body).toEqual({ received: true, test: true, document_id: 'test-1775125230123' });
    // Sent twice (the user clicks again): a test each time, never a duplicate.
    expect((await deliver(r.url, TEST_ACTION)).body).toMatchObject({ test: true });
    // The interface's own marker is a test too.
    expect((await deliver(r.url, { ...deployedEvent('doc_marked'), test: true })).body).toMatchObject({ test: true });
    const real = await deliver(r.url, deployedEvent('d5f0a1b2-0000-4000-8000-000000000001'));
    expect(real.status).toBe(200);
    await r.drained();
    expect(r.lines.filter((l) => l.startsWith('<-- test event test-1775125230123'))).toHaveLength(2);
    expect((await jsonl(r.out)).map((x) => x.document_id)).toEqual(['d5f0a1b2-0000-4000-8000-000000000001']);
    expect(r.stats()).toMatchObject({ received: 1, tests: 3 });
    await r.close();
    expect(rowsOf(r.dataDir, 'SELECT document_id FROM seen')).toEqual([
      { document_id: 'd5f0a1b2-0000-4000-8000-000000000001' },
    ]);
    expect(rowsOf(r.dataDir, 'SELECT document_id FROM inbox')).toEqual([
      { document_id: 'd5f0a1b2-0000-4000-8000-000000000001' },
    ]);
    expect(r.lines.at(-1)).toBe('received 1 (1 new, 0 duplicate), rejected 0, unauthorized 0, test events 3');
  });

  it('listen: an event through a tunnel that keeps the public Host is taken when its credentials are right; without them, or with --auth none, the Host is still refused', async ({
    receiver,
  }) => {
    const r = await deployedReceiver(receiver);
    const port = new URL(r.url).port;
    // undici's request, which (unlike fetch) sends the Host header it is given.
    const post = async (host: string, authorization: string, url = r.url, page: Record<string, string> = {}) => {
      const res = await request(url, {
        method: 'POST',
        headers: { host, 'content-type': 'application/json', 'user-agent': 'Parsli/1.0', authorization, ...page },
        body: JSON.stringify(deployedEvent('d5f0a1b2-0000-4000-8000-000000000020')),
      });
      await res.body.text();
      return res.statusCode;
    };
    expect(await post('hooks-abc.trycloudflare.com', `Basic ${BASE64_CREDENTIALS}`)).toBe(200);
    expect(await post(`hooks-abc.trycloudflare.com:${port}`, 'Basic d3Jvbmc6cGFzcw==')).toBe(403);
    expect(await post('hooks-abc.trycloudflare.com', '')).toBe(403);
    // A browser page is never vouched for, credentials or not: the service's deliveries carry no Origin.
    const page = { origin: 'https://hooks-abc.trycloudflare.com' };
    expect(await post('hooks-abc.trycloudflare.com', `Basic ${BASE64_CREDENTIALS}`, r.url, page)).toBe(403);
    const open = await receiver();
    expect(await post('hooks-abc.trycloudflare.com', `Basic ${BASE64_CREDENTIALS}`, open.url)).toBe(403);
    await r.drained();
    expect(r.lines).toContain('<-- d5f0a1b2-0000-4000-8000-000000000020 parser=Invoices pages=1 new');
  });

  it('listen: text from the network is inert in log lines: control characters escaped, long text cut', async ({
    receiver,
  }) => {
    const r = await deployedReceiver(receiver);
    const forged = `test-1\n<-- forged line \u001b[31m${'x'.repeat(500)}`;
    expect((await deliver(r.url, { ...TEST_ACTION, document_id: forged })).status).toBe(200);
    const line = r.lines.find((l) => l.startsWith('<-- test event test-1'));
    expect(line).toBeDefined();
    expect(line).not.toMatch(/[\n\u001b]/);
    expect(line).toContain('test-1\\x0a<-- forged line \\x1b[31m');
    expect(line!.length).toBeLessThan(400);
  });

  it('listen: the "Base64 Credentials" value docs/listen.md shows how to make authenticates; the value pasted with its "Basic " gets a 401 that says so', async ({
    receiver,
  }) => {
    const docs = readFileSync(join(import.meta.dirname, '../../docs/listen.md'), 'utf8');
    expect(docs).toContain('Base64 Credentials');
    // The recipe as written: its user is ours, its output what the test sends (docs checked by hand in a shell too).
    expect(docs).toContain(`extract listen --user ${USER} `);
    expect(docs).toContain(`printf '%s' "${USER}:$EXTRACT_LISTEN_PASSWORD" | base64 | tr -d '\\n'; echo`);
    const r = await deployedReceiver(receiver);
    expect((await deliver(r.url, deployedEvent('doc_auth'))).status).toBe(200);
    const doubled = await deliver(r.url, deployedEvent('doc_auth'), {
      authorization: `Basic Basic ${BASE64_CREDENTIALS}`,
    });
    expect(doubled.status).toBe(401);
    expect(doubled.body.error).toBe(
      'unauthorized: "Basic " twice (paste only the base64 value as Base64 Credentials: the service adds "Basic ")',
    );
    expect(r.lines.join('\n')).not.toContain(BASE64_CREDENTIALS);
  });

  it('listen: an authenticated JSON event of a shape listen does not expect is answered 200, kept in the inbox, logged, never written; what the sender can fix stays 4xx', async ({
    receiver,
  }) => {
    const r = await deployedReceiver(receiver);
    const { metadata } = deployedEvent('x') as { metadata: Record<string, unknown> };
    const odd = [
      { ...deployedEvent('d-no-pages'), metadata: { ...metadata, page_count: undefined } },
      { ...deployedEvent('d-list-data'), data: [{ [FIELD_TOTAL]: 1 }] },
      { ...deployedEvent('d-other-event'), event: 'document.failed' },
      { ...deployedEvent('d-odd-time'), timestamp: '02/04/2026 10:20' },
    ];
    for (const body of odd) {
      const res = await deliver(r.url, body);
      expect(res.status, JSON.stringify(body)).toBe(200);
    }
    // A field listen does not know is no problem at all: written.
    expect((await deliver(r.url, { ...deployedEvent('d-extra'), integration_id: 'int_1' })).status).toBe(200);
    // What the sender can fix, or what must be refused, stays a 4xx.
    expect((await deliver(r.url, null, { raw: '{"event": "document.proc' })).status).toBe(400);
    expect((await deliver(r.url, null, { raw: '[1, 2]' })).status).toBe(400);
    expect(
      (await deliver(r.url, deployedEvent('d-bad-auth'), { authorization: 'Basic d3Jvbmc6cGFzcw==' })).status,
    ).toBe(401);
    await r.drained();
    for (const id of ['d-no-pages', 'd-list-data', 'd-other-event', 'd-odd-time'])
      expect(r.lines.some((l) => l.startsWith(`<-- ${id} kept, not written: `))).toBe(true);
    expect(r.lines.find((l) => l.startsWith('<-- d-no-pages kept'))).toMatch(
      /^<-- d-no-pages kept, not written: missing at metadata\.page_count \(inbox #1; an event of a shape listen does not know\)$/,
    );
    expect((await jsonl(r.out)).map((x) => x.document_id)).toEqual(['d-extra']);
    // Kept is not seen: the same document, sent again well-formed, is written.
    expect((await deliver(r.url, deployedEvent('d-no-pages'))).status).toBe(200);
    await r.drained();
    expect((await jsonl(r.out)).map((x) => x.document_id)).toEqual(['d-extra', 'd-no-pages']);
    expect(r.stats()).toMatchObject({ received: 6, kept: 4, rejected: 2, unauthorized: 1 });
    await r.close();
    expect(
      rowsOf(r.dataDir, "SELECT document_id, outcome FROM inbox WHERE outcome = 'invalid' ORDER BY seq").map(
        (row) => row.document_id,
      ),
    ).toEqual(['d-no-pages', 'd-list-data', 'd-other-event', 'd-odd-time']);
  });

  it('listen: a duplicate with other data is answered 200, kept in the inbox, and logged as differing from the first', async ({
    receiver,
  }) => {
    const r = await deployedReceiver(receiver);
    const id = 'd5f0a1b2-0000-4000-8000-000000000002';
    expect((await deliver(r.url, deployedEvent(id))).status).toBe(200);
    expect((await deliver(r.url, deployedEvent(id))).status).toBe(200);
    expect((await deliver(r.url, deployedEvent(id, { [FIELD_TOTAL]: 43 }))).status).toBe(200);
    await r.drained();
    const lines = r.lines.filter((l) => l.startsWith(`<-- ${id}`));
    expect(lines).toEqual([
      `<-- ${id} parser=Invoices pages=1 new`,
      `<-- ${id} parser=Invoices pages=1 duplicate`,
      `<-- ${id} parser=Invoices pages=1 duplicate with other data than the first (kept in the inbox as #3, not written)`,
    ]);
    expect((await jsonl(r.out)).map((x) => x.results[FIELD_TOTAL])).toEqual([42.5]);
  });

  it('listen: data keyed by field ids (UUIDs) earns one hint per run that says what the service does, what listen writes, and what to do', async ({
    receiver,
  }) => {
    const r = await deployedReceiver(receiver);
    for (const n of [1, 2, 3])
      expect((await deliver(r.url, deployedEvent(`d5f0a1b2-0000-4000-8000-00000000001${n}`))).status).toBe(200);
    await r.drained();
    const hints = r.lines.filter((l) => l.startsWith('hint: '));
    expect(hints).toHaveLength(1);
    expect(hints[0]).toContain('keyed by field ids');
    expect(hints[0]).toContain(FIELD_INVOICE);
    expect(hints[0]).toMatch(/deployed service keys data by field id/);
    expect(hints[0]).toMatch(/listen writes the keys as sent/);
    // Names earn no hint.
    const named = await receiver();
    await fetch(named.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...deployedEvent('doc_named'), data: { invoice_number: 'INV-1', total: 1 } }),
    });
    await named.drained();
    expect(named.lines.filter((l) => l.startsWith('hint: '))).toEqual([]);
  });
});
