import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { ErrorBody, UploadTicket } from '../../src/contract/index.ts';
import { tempDir } from '../helpers/cli.ts';
import { call, KEY } from '../helpers/emulator.ts';
import { TRAVERSALS, oddText as oddTextOf } from '../helpers/bad-input.ts';
import { exactLedger, pdfClaimingPages } from '../helpers/hostile.ts';
import { it } from '../helpers/fixtures.ts';

const oddText = oddTextOf('x.pdf', { huge: true });

/** PDFs whose page tree claims pages no document has: inline, they must be 422, never a reserve. */
const lyingPdfs = await Promise.all([-1_000_000, 0, -1].map((n) => pdfClaimingPages(n)));
const HOSTILE_HOSTS = ['evil.example', 'evil.example:8787', 'rebind.attacker.test'];
/** Absent most of the time, so the other rules keep most of the runs. */
const rarely = (values: fc.Arbitrary<string>) =>
  fc.oneof({ arbitrary: fc.constant(''), weight: 5 }, { arbitrary: values, weight: 1 });

const jsonish = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.json().map((j) => j.slice(0, Math.max(0, j.length - 3))), // truncated
  fc
    .record(
      {
        file: fc.record(
          {
            data: fc.oneof(fc.base64String({ maxLength: 200 }), oddText),
            name: oddText,
            type: fc.option(oddText, { nil: undefined }),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc
    .record(
      {
        storage_path: oddText,
        file_name: oddText,
        file_type: oddText,
        file_size: fc.oneof(fc.integer(), fc.double(), fc.string()),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.record({ file_name: oddText, file_type: oddText }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
  fc.record({ pages: fc.oneof(fc.integer(), fc.string(), fc.double()) }).map((o) => JSON.stringify(o)),
  fc.constant(''),
  fc
    .constantFrom(...lyingPdfs)
    .map((b) => JSON.stringify({ file: { data: b.toString('base64'), name: 'lying.pdf', type: 'application/pdf' } })),
  fc.integer({ min: 20, max: 3000 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`), // deep nesting
);

const target = fc.oneof(
  fc.constant('/api/v1/upload-url'),
  fc.constant('/api/v1/extract'),
  oddText.map((id) => `/api/v1/documents/${encodeURIComponent(id)}`),
  fc.constantFrom(...TRAVERSALS).map((t) => `/api/v1/documents/${t}`),
  oddText.map((p) => `/_storage/${encodeURIComponent(p)}?expires=1&sig=${'0'.repeat(64)}`),
  fc.constantFrom(...TRAVERSALS).map((t) => `/_storage/prs_invoices/${t}/x.pdf`),
  fc.constantFrom(
    '/_emulator/credits',
    '/_emulator/faults',
    '/_emulator/deliveries/recover',
    '/_emulator/deliveries?outcome=nope&limit=-1',
    '/_emulator/documents?offset=-5',
    '/_emulator/parsers/prs_invoices/documents',
    '/inbound/prs_invoices/0000',
  ),
  oddText.map((p) => `/${encodeURIComponent(p)}`),
);

const headers = fc.record(
  {
    authorization: fc.oneof(
      fc.constant(`Bearer ${KEY}`),
      fc.constant(`bearer  ${KEY} `),
      fc.constant('Bearer'),
      fc.constant(`Basic ${KEY}`),
      oddText.map((t) => t.replace(/[\r\n\u0000-\u001f\u007f-\uffff]/g, '')),
    ),
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/pdf',
      'multipart/form-data',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      '',
    ),
    'idempotency-key': fc.string({ maxLength: 300 }).map((t) => t.replace(/[^\x21-\x7e]/g, 'x')),
    prefer: fc.constantFrom('code=xyz', 'outcome=maybe', ';;=', 'code=402'),
    // Mostly absent, so the other rules still get most of the runs.
    host: rarely(fc.constantFrom('127.0.0.1', 'localhost', '[::1]', ...HOSTILE_HOSTS)),
    origin: rarely(fc.constantFrom('http://evil.example', 'null', 'not a url')),
    'sec-fetch-site': rarely(fc.constantFrom('same-origin', 'none', 'cross-site', 'same-site')),
  },
  { requiredKeys: [] },
);

describe('emulator: bad input, property-based', () => {
  it('answers every malformed request with a JSON 4xx, never a 5xx, never a crash, never a file outside the data directory', async ({
    emulator,
  }) => {
    const dataDir = tempDir();
    const s = await emulator({ inline: { timeout_ms: 30_000, max_body_bytes: 256 * 1024 } }, { dataDir });
    let tried = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
        target,
        headers,
        jsonish,
        async (method, path, hdrs, body) => {
          tried++;
          const clean = Object.fromEntries(
            Object.entries(hdrs).filter(([, v]) => v !== '' && v !== undefined),
          ) as Record<string, string>;
          const res = await request(`${s.url}${path}`, {
            method,
            headers: clean,
            body: method === 'GET' ? undefined : body,
          });
          const text = await res.body.text();
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          expect(res.statusCode, `${method} ${path} -> ${text.slice(0, 200)}`).toBeLessThan(500);
          if (res.statusCode >= 400) ErrorBody.parse(JSON.parse(text));
          if (res.statusCode === 402 && clean.prefer !== 'code=402') throw new Error('402 without a reason');
          // A rebound name is refused everywhere; a write from another origin's page outside the API and storage.
          // (a URL that does not even decode is a 400 before any rule: refused all the same)
          if (clean.host !== undefined && HOSTILE_HOSTS.includes(clean.host))
            expect([400, 403], `${method} ${path} host ${clean.host}`).toContain(res.statusCode);
          const pageWrite = method !== 'GET' && !path.startsWith('/api/v1/') && !path.startsWith('/_storage/');
          if (
            pageWrite &&
            (clean.origin !== undefined ||
              clean['sec-fetch-site'] === 'cross-site' ||
              clean['sec-fetch-site'] === 'same-site')
          )
            expect([400, 403, 404], `${method} ${path} from a page`).toContain(res.statusCode);
        },
      ),
      { numRuns: 2500, seed: 20261122 },
    );
    // A huge body and doubled headers, once each.
    const huge = await request(`${s.url}/api/v1/extract`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: `{"file":{"name":"a.pdf","data":"${'A'.repeat(2 * 1024 * 1024)}"}}`,
    });
    expect(huge.statusCode).toBe(413);
    await huge.body.text();
    const doubled = await request(`${s.url}/api/v1/documents/doc_x`, {
      method: 'GET',
      headers: ['authorization', `Bearer ${KEY}`, 'authorization', `Bearer ${KEY}`],
    });
    expect(doubled.statusCode).toBeLessThan(500);
    await doubled.body.text();

    expect((await call(s, 'GET', '/_emulator/health')).status).toBe(200);
    // Whatever was sent, the ledger adds up and holds nothing negative.
    const ledger = await exactLedger(s, 1000);
    expect(ledger.negative).toBe(0);
    expect(ledger.balance).toBe(ledger.sum);
    const inside = new Set(readdirSync(dataDir));
    for (const name of inside)
      expect(['blobs', 'partial', 'emulator.db', 'emulator.db-wal', 'emulator.db-shm']).toContain(name);
    expect(readdirSync(join(dataDir, 'partial'))).toEqual([]);
    console.log(
      `bad input: tried ${tried} generated requests; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(tried).toBeGreaterThanOrEqual(2500);
  }, 240_000);

  it('file names with traversal, control characters and odd Unicode become one safe storage-path segment', async ({
    emulator,
  }) => {
    const s = await emulator();
    await fc.assert(
      fc.asyncProperty(
        oddText.filter((t) => t.length > 0),
        async (name) => {
          const r = await call(s, 'POST', '/api/v1/upload-url', {
            body: { file_name: name, file_type: 'application/pdf' },
          });
          if (r.status !== 200) {
            expect(r.status).toBe(400);
            return;
          }
          const ticket = UploadTicket.parse(r.body);
          const segments = ticket.storage_path.split('/');
          expect(segments).toHaveLength(3);
          expect(segments[2]).not.toMatch(/^\.|[\u0000-\u001f\\/]/);
          expect(segments[2]!.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 400, seed: 7 },
    );
  });
});
