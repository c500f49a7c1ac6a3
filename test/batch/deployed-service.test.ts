import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { DEFAULT_INLINE_MAX } from '../../src/flags/batch.ts';
import { deployedStandIn, type DeployedStandIn } from '../helpers/deployed-stand-in.ts';
import { KEY as EMULATOR_KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { batchOptions, invoiceDir, journalFacts, ledgerTotals, run } from './harness.ts';

/**
 * The batch client against the service as it is deployed (test/helpers/deployed-stand-in.ts),
 * in process: what it learns of the service without paying, the pages it counts itself, sizes
 * and time limits, refunded failures, and a redirect. POSTs are counted per content: nothing is
 * sent twice that may have been charged; a refunded failure is sent once more by a plain rerun.
 */

const KEY = 'ext_deployed_test_key';

const options = (url: string, extra: Parameters<typeof batchOptions>[2] = {}) =>
  batchOptions(url, KEY, { inlineMax: DEFAULT_INLINE_MAX, out: 'out.jsonl', ...extra });

type Line = {
  file: string;
  status: string;
  document_id: string | null;
  page_count: number | null;
  error: string | null;
};
const records = (cwd: string): Line[] =>
  readFileSync(join(cwd, 'out.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);

const total = (service: DeployedStandIn): number => [...service.posts.values()].reduce((a, b) => a + b, 0);

/** A file of `bytes` random bytes named NAME under in/ (a scan as far as size goes). */
function scan(cwd: string, name: string, bytes: number): void {
  writeFileSync(join(cwd, 'in', name), Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(bytes)]));
}

describe('the batch client against the service as deployed', () => {
  it('8 small PDFs: completed, no route complaint, pages charged counted by the client (16), no per-document warning', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(8, 2);
    const first = await run(cwd, ['in/'], options(service.url));
    expect(first.summary.exit_code, first.stderr).toBe(0);
    expect(first.summary.completed).toBe(8);
    expect(first.stderr).not.toMatch(/HTML page|is not the extraction service|page count unavailable/);
    expect(first.summary.pages_charged).toBe(16);
    expect(first.summary.pages_unknown_documents).toBe(0);
    const lines = records(cwd);
    expect(lines.map((r) => r.page_count)).toEqual(Array(8).fill(2));
    // Marked as counted by the client in the report and the summary; the record's columns stay the same.
    expect([...first.summary.documents].map((d) => d.pages_counted_by)).toEqual(Array(8).fill('client'));
    expect(first.summary.pages_counted_by_client).toBe(16);
    expect(first.stderr).toMatch(/16 pages charged \(counted by extract: the service gives no page count\)/);
    expect(total(service)).toBe(8);
    // Learnt without paying, said once: the documents route is absent (at most one GET per send slot).
    const gets = [...service.requests].filter(([k]) => k.startsWith('GET ')).reduce((a, [, n]) => a + n, 0);
    expect(gets).toBeLessThanOrEqual(4);
    expect(first.stderr.match(/has no route to read a document/g)).toHaveLength(1);

    // Remembered: the next run over new files asks no documents route at all.
    const more = await invoiceDir(2, 1);
    const again = await run(more, ['in/'], { ...options(service.url), state: join(cwd, '.extract-state.jsonl') });
    expect(again.summary.exit_code, again.stderr).toBe(0);
    expect(again.summary.pages_charged).toBe(2);
    const after = [...service.requests].filter(([k]) => k.startsWith('GET ')).reduce((a, [, n]) => a + n, 0);
    expect(after).toBe(gets);
  });

  it('another key on a service with no document route: nothing sent (it cannot tell whether both keys are one parser), and no document paid again', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(3, 1);
    expect((await run(cwd, ['in/'], options(service.url))).summary.exit_code).toBe(0);
    expect(total(service)).toBe(3);
    const rotated = await run(
      cwd,
      ['in/'],
      batchOptions(service.url, 'ext_rotated_key', { inlineMax: DEFAULT_INLINE_MAX, out: 'out.jsonl' }),
    ).catch((e: unknown) => e);
    expect(rotated).toMatchObject({ code: 'usage' });
    expect(String(rotated)).toMatch(/cannot tell whether both keys are one parser's: nothing was sent/);
    expect(total(service)).toBe(3);
  });

  it('a file gone once its answer is in: the pages are counted from the bytes sent, and the answer is kept', async ({
    httpServer,
  }) => {
    const cwd = await invoiceDir(1, 3);
    // The service takes the request (and charges), and the file is moved away before the client counts its pages.
    const service = await deployedStandIn(httpServer, {
      onExtract: () => renameSync(join(cwd, 'in', 'doc-00.pdf'), join(cwd, 'gone.pdf')),
    });
    const first = await run(cwd, ['in/'], options(service.url));
    expect(first.summary.exit_code, first.stderr).toBe(0);
    expect(records(cwd)[0]).toMatchObject({ status: 'completed', page_count: 3 });
    expect(total(service)).toBe(1);
  });

  it('a 404 page on documents/{id} in front of a service that has the route: an upload after it is still collected, never stranded', async ({
    httpServer,
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    // A page in front of the service answers the first document read with an HTML 404.
    let pages = 0;
    const front = await httpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        if (req.method === 'GET' && (req.url ?? '').includes('/documents/') && pages++ === 0) {
          res.writeHead(404, { 'content-type': 'text/html' }).end('<!DOCTYPE html><h1>404</h1>');
          return;
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers[k] = v;
        const answer = await fetch(`${server.url}${req.url}`, {
          method: req.method ?? 'GET',
          headers,
          ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
        });
        res
          .writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
          .end(Buffer.from(await answer.arrayBuffer()));
      });
    });
    const cwd = await invoiceDir(0);
    writeFileSync(join(cwd, 'in', 'a-small.pdf'), await invoicePdf(5151));
    writeFileSync(join(cwd, 'in', 'b-large.pdf'), await invoicePdf(5252, 12));
    const large = readFileSync(join(cwd, 'in', 'b-large.pdf')).length;
    const first = await run(
      cwd,
      ['in/'],
      batchOptions(front.url, EMULATOR_KEY, { inlineMax: large - 1, concurrency: 1, out: 'out.jsonl' }),
    );
    expect(first.summary.exit_code, first.stderr).toBe(0);
    expect(records(cwd).map((r) => [r.file, r.status])).toEqual([
      ['in/a-small.pdf', 'completed'],
      ['in/b-large.pdf', 'completed'],
    ]);
    expect(first.stderr).toMatch(/the earlier 404 page on documents\/\{id\} was not the service's/);
    expect([...(await ledgerTotals(server.url)).reservesBySha.values()]).toEqual([1, 1]);
  });

  it('a 4 MB scan beside 3 small PDFs: the three complete, the scan fails as too large for this service (no upload route), exit 1, outputs written; a plain rerun does not resend it, --retry-failed does', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(3, 1);
    scan(cwd, 'big-scan.pdf', 4_000_000);
    const first = await run(cwd, ['in/'], options(service.url));
    expect(first.summary.stopped_by, first.stderr).toBeNull();
    expect(first.summary.exit_code, first.stderr).toBe(1);
    expect(first.summary.completed).toBe(3);
    const lines = records(cwd);
    expect(lines.filter((r) => r.status === 'completed')).toHaveLength(3);
    const big = lines.find((r) => r.file.endsWith('big-scan.pdf'));
    expect(big?.status).toBe('error');
    expect(big?.error).toMatch(/too large for this service's inline route.*no upload route/);
    expect(service.charged()).toBe(3);
    const upload = service.requests.get('POST /api/v1/upload-url') ?? 0;
    expect(upload).toBeLessThanOrEqual(1);

    const rerun = await run(cwd, ['in/'], options(service.url));
    expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
    expect(total(service)).toBe(3);
    // What the service offers is remembered: no second upload-url.
    expect(service.requests.get('POST /api/v1/upload-url') ?? 0).toBe(upload);

    const retried = await run(cwd, ['in/'], options(service.url, { retryFailed: true }));
    expect(retried.summary.exit_code).toBe(1);
    expect(retried.summary.failed).toBe(1);
  });

  it('a body over the inline limit is a 413 the client learns from: the next large file goes by its size, not sent', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(1, 1);
    scan(cwd, 'a-scan.pdf', 3_600_000);
    scan(cwd, 'b-scan.pdf', 3_700_000);
    const first = await run(cwd, ['in/'], options(service.url, { inlineMax: 5_000_000, concurrency: 1 }));
    expect(first.summary.exit_code, first.stderr).toBe(1);
    expect(first.summary.stopped_by).toBeNull();
    expect(first.summary.completed).toBe(1);
    const lines = records(cwd);
    for (const name of ['a-scan.pdf', 'b-scan.pdf'])
      expect(lines.find((r) => r.file.endsWith(name))?.error).toMatch(/too large for this service's inline route/);
    // One 413 taught the limit: the second scan was not sent inline.
    expect(total(service)).toBe(1);
    const facts = journalFacts(cwd).filter((f) => f.fact === 'failed');
    expect(facts.map((f) => (f.fact === 'failed' ? f.charge : ''))).toEqual(['none', 'none']);
  });

  it('a 504 FUNCTION_INVOCATION_TIMEOUT is the inline time limit: failed as too slow, nothing charged; a plain rerun does not resend it, --retry-failed does', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(0);
    writeFileSync(join(cwd, 'in', 'slow-scan.pdf'), readFileSync(join(await invoiceDir(1), 'in', 'doc-00.pdf')));
    const first = await run(cwd, ['in/'], options(service.url));
    expect(first.summary.exit_code, first.stderr).toBe(1);
    const [line] = records(cwd);
    expect(line?.error).toMatch(/too slow for this service's inline (time )?limit/);
    expect(line?.error).not.toMatch(/proxy|document list/);
    const failed = journalFacts(cwd).find((f) => f.fact === 'failed');
    expect(failed).toMatchObject({ charge: 'none' });
    expect(total(service)).toBe(1);

    const rerun = await run(cwd, ['in/'], options(service.url));
    expect(rerun.summary.exit_code).toBe(0);
    expect(total(service)).toBe(1);
    await run(cwd, ['in/'], options(service.url, { retryFailed: true }));
    expect(total(service)).toBe(2);
  });

  it('success: false keeps its document_id, is a refunded failure, and a plain rerun sends it again once', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer, { failTimes: 2 });
    const cwd = await invoiceDir(0);
    writeFileSync(join(cwd, 'in', 'bad-scan.pdf'), readFileSync(join(await invoiceDir(1), 'in', 'doc-00.pdf')));
    const first = await run(cwd, ['in/'], options(service.url));
    expect(first.summary.exit_code, first.stderr).toBe(1);
    const [line] = records(cwd);
    expect(line).toMatchObject({ status: 'error', document_id: 'doc_1' });
    expect(line?.error).toMatch(/Extraction failed/);
    expect(journalFacts(cwd).find((f) => f.fact === 'failed')).toMatchObject({
      charge: 'refunded',
      document_id: 'doc_1',
    });

    const rerun = await run(cwd, ['in/'], options(service.url));
    expect(rerun.stderr).not.toMatch(/crash or kill/);
    expect(total(service)).toBe(2);
    expect(rerun.summary.exit_code).toBe(1);
    // Sent again once: it failed again, so the next plain run sets it aside.
    const third = await run(cwd, ['in/'], options(service.url));
    expect(third.summary.exit_code).toBe(0);
    expect(total(service)).toBe(2);
  });

  it('a lone large file: the first API request is upload-url, its 404 page checked at no cost, so the service is not called wrong', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(0);
    scan(cwd, 'only-scan.pdf', 4_000_000);
    const first = await run(cwd, ['in/'], options(service.url));
    expect(first.summary.stopped_by, first.stderr).toBeNull();
    expect(first.summary.exit_code).toBe(1);
    expect(records(cwd)[0]?.error).toMatch(/too large for this service's inline route.*no upload route/);
    expect(service.charged()).toBe(0);
    expect(total(service)).toBe(0);
  });

  it('a lone large file against a site that is not the service: still a wrong base URL, exit 2', async ({
    httpServer,
  }) => {
    const site = await httpServer((req, res) => {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>Not Found</title>');
    });
    const cwd = await invoiceDir(0);
    scan(cwd, 'only-scan.pdf', 4_000_000);
    const first = await run(cwd, ['in/'], options(site.url));
    expect(first.summary.stopped_by, first.stderr).toBe('wrong_service');
    expect(first.summary.exit_code).toBe(2);
  });

  it("a proxy's 502 shows nothing of what stands behind it: a site that is not the service is still named as such, its 404 page never learnt as a missing route", async ({
    httpServer,
  }) => {
    const site = await httpServer((req, res) => {
      req.resume();
      if (req.method === 'POST' && req.url === '/api/v1/extract')
        res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway');
      else res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>Not Found</title>');
    });
    const cwd = await invoiceDir(1);
    scan(cwd, 'z-scan.pdf', 4_000_000);
    const first = await run(cwd, ['in/'], options(site.url, { concurrency: 1 }));
    expect(first.stderr).not.toMatch(/has no upload route/);
    expect(first.summary.stopped_by, first.stderr).toBe('wrong_service');
  });

  it('an answer lost on a service with no route to ask: the message says its fate cannot be known and what --retry-failed may cost', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(2, 3);
    renameSync(join(cwd, 'in', 'doc-01.pdf'), join(cwd, 'in', 'z-lost.pdf'));
    const first = await run(cwd, ['in/'], options(service.url, { concurrency: 1 }));
    expect(first.summary.exit_code, first.stderr).toBe(1);
    const lost = records(cwd).find((r) => r.file.endsWith('z-lost.pdf'));
    expect(lost?.error).toMatch(/fate cannot be known: this service has no route to ask about a document/);
    expect(lost?.error).toMatch(/--retry-failed sends it again, which may charge 3 pages once more/);
    expect(lost?.error).not.toMatch(/document list/);
    const rerun = await run(cwd, ['in/'], options(service.url, { concurrency: 1 }));
    expect(rerun.summary.exit_code).toBe(1);
    expect(total(service)).toBe(2);
  });

  it('a redirect on the base URL is not followed with the key: exit 2, naming the address to use', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(2, 1);
    const first = await run(cwd, ['in/'], options(`${service.url}/www`));
    expect(first.summary.exit_code, first.stderr).toBe(2);
    expect(first.stderr).toContain(`EXTRACT_BASE_URL=${service.url}`);
    expect(total(service)).toBe(0);
    expect(service.requests.get('POST /api/v1/extract') ?? 0).toBe(0);
  });
});
