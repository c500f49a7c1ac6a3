import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import type { StartHttpServer } from '../helpers/http-server.ts';
import { batchOptions, invoiceDir, run } from './harness.ts';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';
import { REQUEST_TIMEOUT_MS } from '../../src/client/service-client.ts';

/**
 * `--poll-timeout` holds against a service whose GET drips a byte at a time. Before,
 * the GET ran until the client's per-attempt limit (60 s) times its retries, whatever the deadline.
 */

const KEY = 'ext_poll_deadline_key_0001';

/** Upload-url, PUT and POST extract answer as the spec says; every GET drips forever. */
async function drippingService(httpServer: StartHttpServer): Promise<{ url: string; gets: () => number }> {
  let gets = 0;
  const { url } = await httpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (body: unknown) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && req.url === '/api/v1/upload-url')
        return json({ upload_url: `${url}/put/a.pdf`, storage_path: 'p/a.pdf', expires_in: 900 });
      if (req.method === 'PUT') return res.writeHead(200).end();
      if (req.method === 'POST' && req.url === '/api/v1/extract')
        return json({
          success: true,
          document_id: 'doc_drip',
          status: 'processing',
          poll_url: '/api/v1/documents/doc_drip',
        });
      gets++;
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 200);
      res.on('close', () => clearInterval(drip));
    });
  });
  return { url, gets: () => gets };
}

describe('poll deadline', () => {
  it(
    'a GET that drips past --poll-timeout is cut: the document is pending, with its id, in seconds',
    async ({ httpServer }) => {
      const service = await drippingService(httpServer);
      const cwd = await invoiceDir(1);
      const started = Date.now();
      // 3 s of the fake clock: one sleep of 2 s, then a GET with 1 s left (at least 5 s of real time),
      // then one read for the page count (5 s at most).
      const r = await run(
        cwd,
        ['in'],
        batchOptions(service.url, KEY, { route: 'upload', poll: { ...DEFAULT_POLL, timeoutMs: 3_000 } }),
      );
      const took = Date.now() - started;
      const records = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { status: string; document_id: string | null });
      expect(records).toMatchObject([{ status: 'pending', document_id: 'doc_drip' }]);
      expect(r.summary.exit_code).toBe(5);
      // The poll, then the one bounded read a stopped run makes to learn the pages charged.
      expect(service.gets()).toBe(2);
      // Cut before the one attempt's own limit ran out, which the old code waited for at least
      // (then again per retry): a bound set by the client's constant, not by this machine's
      // speed (about 6 s of timers here; the CPU work is a small part of it).
      expect(took).toBeLessThan(REQUEST_TIMEOUT_MS);
    },
    2 * REQUEST_TIMEOUT_MS,
  );
});
