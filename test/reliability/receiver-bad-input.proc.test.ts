import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { WebhookPayload } from '../../src/contract/index.ts';
import { it, payload } from '../receiver/helpers.ts';
import { TRAVERSALS, oddText as oddTextOf } from '../helpers/bad-input.ts';

/**
 * Bad input over the webhook receiver (`extract listen`), property-based like the emulator's
 * test/emulator/bad-input.test.ts: malformed and truncated JSON, wrong types, huge bodies,
 * odd and doubled headers, wrong methods, path traversal in the URL and in the fields that
 * name output files. Each gets a 4xx with a JSON error (or a 200 for an authenticated JSON object:
 * a valid event is written, another kept), never a 5xx, never a crash, never a file outside the
 * output directory.
 */

const TOKEN = 'whk_reliability_token_4242';
const MAX_BODY = 64 * 1024;
const oddText = oddTextOf('doc_1');

/** Anything in place of a field: the wrong type, null, a huge string. */
const wrongValue = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
  oddText,
);

/** A valid event with one field replaced, removed, or given a traversal-bearing id or file name. */
const mutatedEvent = fc
  .record({
    field: fc.constantFrom(
      'event',
      'parser_id',
      'parser_name',
      'document_id',
      'timestamp',
      'data',
      'metadata',
      'metadata.file_name',
      'metadata.page_count',
      'metadata.mime_type',
    ),
    mode: fc.constantFrom('replace', 'remove', 'keep'),
    value: wrongValue,
    id: oddText,
  })
  .map(({ field, mode, value, id }) => {
    const event: Record<string, unknown> = { ...payload({ document_id: id }) };
    const [top, inner] = field.split('.') as [string, string | undefined];
    const holder: Record<string, unknown> =
      inner === undefined ? event : { ...(event[top] as Record<string, unknown>) };
    if (inner !== undefined) event[top] = holder;
    const key = inner ?? top;
    if (mode === 'replace') holder[key] = value;
    if (mode === 'remove') delete holder[key];
    return JSON.stringify(event);
  });

const body = fc.oneof(
  { arbitrary: fc.json({ maxDepth: 3 }), weight: 3 },
  { arbitrary: fc.json().map((j) => j.slice(0, Math.max(0, j.length - 3))), weight: 2 }, // truncated
  { arbitrary: mutatedEvent, weight: 6 },
  { arbitrary: mutatedEvent.map((j) => j.slice(0, Math.floor(j.length / 2))), weight: 2 }, // a valid event cut in half
  { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)), weight: 1 }, // not UTF-8 at all
  { arbitrary: fc.constant(''), weight: 1 },
  { arbitrary: fc.constant(JSON.stringify(payload({ data: { note: 'x'.repeat(MAX_BODY) } }))), weight: 1 }, // over the limit
  // Nested deep inside a real event: refused before anything recurses into it.
  {
    arbitrary: fc
      .integer({ min: 20, max: 5000 })
      .map((d) =>
        JSON.stringify(payload({ data: { invoice_number: 'N' } })).replace('"N"', `${'['.repeat(d)}1${']'.repeat(d)}`),
      ),
    weight: 1,
  },
);

/** Where a request says it is going and which page sent it: this machine's, or a hostile page's. */
const HOSTILE_HOSTS = ['evil.example', 'evil.example:8788', 'rebind.attacker.test'];
const HOSTILE_ORIGINS = ['http://evil.example', 'null'];
const site = fc.record(
  {
    host: fc.constantFrom('127.0.0.1', 'localhost', 'app.localhost', ...HOSTILE_HOSTS),
    origin: fc.constantFrom(...HOSTILE_ORIGINS),
    'sec-fetch-site': fc.constantFrom('same-origin', 'none', 'cross-site', 'same-site'),
  },
  { requiredKeys: [] },
);
const path = fc.oneof(
  { arbitrary: fc.constant('/webhook'), weight: 12 },
  fc.constant('/webhook?x=1'),
  fc.constantFrom(...TRAVERSALS).map((t) => `/webhook/${t}`),
  fc.constantFrom(...TRAVERSALS).map((t) => `/${t}/webhook`),
  oddText.map((p) => `/${encodeURIComponent(p)}`),
);

const authorization = fc.oneof(
  { arbitrary: fc.constant(`Bearer ${TOKEN}`), weight: 10 },
  fc.constant(`bearer ${TOKEN}`),
  fc.constant(`Bearer ${TOKEN}x`),
  fc.constant(`Bearer ${TOKEN.slice(0, -1)}`),
  fc.constant('Bearer'),
  fc.constant(`Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`),
  oddText.map((t) => t.replace(/[\r\n\u0000-\u001f\u007f-\uffff]/g, '')),
  fc.constant(undefined),
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/octet-stream',
  undefined,
);

describe('receiver: bad input, property-based', () => {
  it('answers every malformed request with a JSON 4xx (or 200 for an authenticated JSON object), never a 5xx, never a crash, never a file outside its directories', async ({
    receiver,
  }) => {
    const r = await receiver({ auth: { type: 'bearer', token: TOKEN }, maxBodyBytes: MAX_BODY, log: () => {} });
    const outDir = join(r.dataDir, 'records');
    await r.close();
    // Again, now writing one file per document_id: ids full of traversal must stay inside.
    const s = await receiver({
      auth: { type: 'bearer', token: TOKEN },
      maxBodyBytes: MAX_BODY,
      out: `${outDir}/`,
      dataDir: r.dataDir,
      log: () => {},
    });

    let tried = 0;
    let accepted = 0;
    let valid = 0;
    const statuses = new Map<number, number>();
    const base = new URL(s.url).origin;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'POST',
          'PUT',
          'POST',
          'PUT',
          'POST',
          'PUT',
          'POST',
          'PUT',
          'GET',
          'HEAD',
          'DELETE',
          'PATCH',
          'OPTIONS',
        ),
        path,
        authorization,
        contentType,
        fc.boolean(),
        body,
        fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: site, weight: 1 }), // mostly absent: the other rules keep their runs
        async (method, target, auth, type, doubled, sent, from) => {
          tried++;
          const headers: string[] = [];
          for (const [k, v] of Object.entries(from ?? {})) headers.push(k, v);
          if (auth !== undefined && auth !== '')
            headers.push('authorization', auth, ...(doubled ? ['authorization', auth] : []));
          if (type !== undefined) headers.push('content-type', type);
          const hasBody = method !== 'GET' && method !== 'HEAD';
          const res = await request(`${base}${target}`, { method, headers, body: hasBody ? sent : undefined });
          const text = await res.body.text();
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          const what = `${method} ${target} ${auth ?? '(no auth)'} -> ${res.statusCode} ${text.slice(0, 200)}`;
          expect(res.statusCode, what).toBeLessThan(500);
          // A write from a hostile page or to a rebound name never lands.
          // (on the receiver's own path it is 403 whatever else is wrong; elsewhere, some 4xx)
          // (a foreign Host with the right token is the service through a tunnel: let through)
          const vouched = from?.origin === undefined && auth?.replace(/^bearer /i, 'Bearer ') === `Bearer ${TOKEN}`;
          const write = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
          const crossOrigin =
            from !== undefined &&
            (from.origin !== undefined ||
              from['sec-fetch-site'] === 'cross-site' ||
              from['sec-fetch-site'] === 'same-site');
          const refused =
            (from?.host !== undefined && HOSTILE_HOSTS.includes(from.host) && !vouched) || (crossOrigin && write);
          if (refused && target === '/webhook') expect(res.statusCode, what).toBe(403);
          else if (refused) expect(res.statusCode, what).toBeGreaterThanOrEqual(400);
          if (res.statusCode === 200) {
            accepted++;
            // Only a JSON object, with the right token, is accepted: a real event is written, any
            // other object kept in the inbox (the deployed sender never retries a 4xx).
            expect(auth?.replace(/^bearer /i, 'Bearer '), what).toBe(`Bearer ${TOKEN}`); // the scheme is case-insensitive
            const json: unknown = JSON.parse(String(sent));
            expect(typeof json === 'object' && json !== null && !Array.isArray(json), what).toBe(true);
            if (WebhookPayload.safeParse(json).success) valid++;
          } else {
            expect(res.statusCode, what).toBeGreaterThanOrEqual(400);
            if (method !== 'HEAD') {
              const error = JSON.parse(text) as { error?: unknown; code?: unknown };
              expect(typeof error.error, what).toBe('string');
              expect(typeof error.code, what).toBe('string');
              expect(text, what).not.toContain(TOKEN);
            }
          }
        },
      ),
      { numRuns: 2000, seed: 4242 },
    );

    // Still alive, and still accepting a valid event.
    const ok = await request(s.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload({ document_id: 'doc_after' })),
    });
    expect(ok.statusCode).toBe(200);
    await ok.body.text();
    await s.drained();
    await s.close();

    // Nothing outside: the data directory holds the receiver's own files, the output folder only flat JSON files.
    for (const name of readdirSync(r.dataDir))
      expect(name, name).toMatch(/^(records|review\.jsonl|inbox\.db(-wal|-shm)?|[\w.-]+\.(db|sqlite)(-wal|-shm)?)$/);
    const records = readdirSync(outDir);
    for (const name of records) {
      // file-names.ts: percent-encoded, never hidden, a hash suffix after `~` when long.
      expect(name).toMatch(/^[A-Za-z0-9_%~-][A-Za-z0-9._%~-]*\.json$/);
      expect(statSync(join(outDir, name)).isFile()).toBe(true);
    }
    expect(records).toContain('doc_after.json');
    console.log(
      `receiver bad input: tried ${tried} generated requests (${accepted} accepted, ${valid} of them valid events, ${records.length} record files, all inside); statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(tried).toBeGreaterThanOrEqual(2000);
  }, 180_000);
});
