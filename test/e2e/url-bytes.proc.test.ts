import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { extract, readJsonLines, reservesBySha, serveForFile } from './batch-helpers.ts';

/**
 * A URL's bytes are another party's: a source that answers differently to each GET, against a
 * service that ignores Idempotency-Key (every POST extract is a reserve in its ledger). What a
 * run hashes is what it sends and what it is charged for: one GET per URL per run, the record's
 * sha256 the bytes of that GET, the ledger's reserve under the same sha256; a changed document
 * is paid once as new, an unchanged one never again.
 */

const url = serveForFile({ idempotency_key: false });
let source: Server;
let base: string;
/** Each GET of /changing.pdf answers the next invoice, until `frozen`; the sha256 of each answer, in order. */
let gets = 0;
let frozen: Buffer | undefined;
const served: string[] = [];
const byId = new Map<string, Buffer>();
/**
 * /held/N.pdf: each answer is held until as many GETs are open as can be (`held.at` at once, or
 * all those left), then the open ones are answered last-come first: a reader one at a time waits
 * out the hold (`held.giveUpMs`) and is seen as one open at most.
 */
const held = { at: 3, total: 0, answered: 0, open: [] as Array<() => void>, most: 0, giveUpMs: 10_000 };

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  const versions = await Promise.all([1, 2, 3, 4].map((i) => invoicePdf(9300 + i)));
  for (const id of ['1', '2']) byId.set(id, await invoicePdf(9400 + Number(id)));
  for (let i = 1; i <= 5; i++) byId.set(`held-${i}`, await invoicePdf(9500 + i));
  source = createServer((req, res) => {
    const at = new URL(req.url ?? '/', 'http://x');
    let body: Buffer | undefined;
    const heldMatch = /^\/held\/(\d+)\.pdf$/.exec(at.pathname);
    if (heldMatch !== null) {
      const bytes = byId.get(`held-${heldMatch[1]}`);
      if (bytes === undefined) return res.writeHead(404).end();
      const answer = (): void => {
        held.answered++;
        res.writeHead(200, { 'content-type': 'application/pdf' }).end(bytes);
      };
      held.open.push(answer);
      held.most = Math.max(held.most, held.open.length);
      const release = (): void => {
        for (const a of held.open.splice(0).reverse()) a();
      };
      if (held.open.length >= Math.min(held.at, held.total - held.answered)) release();
      else setTimeout(() => held.open.includes(answer) && release(), held.giveUpMs).unref();
      return;
    }
    if (at.pathname === '/changing.pdf') body = frozen ?? versions[gets++ % versions.length];
    else if (at.pathname === '/download') body = byId.get(at.searchParams.get('id') ?? '');
    if (body === undefined) return res.writeHead(404).end();
    served.push(sha(body));
    res.writeHead(200, { 'content-type': 'application/pdf' }).end(body);
  });
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
});

afterAll(async () => {
  source.closeAllConnections();
  await new Promise((resolve) => source.close(resolve));
});

function reportOf(cwd: string): Array<{ file: string; outcome: string; sha256: string | null }> {
  return (JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as { documents: [] }).documents;
}

describe('a URL whose bytes change', () => {
  it('between GETs: each run reads it once; what is hashed is what is sent and charged; changed bytes are paid once as new, the same bytes never again', async () => {
    const cwd = tempDir('extract-url-bytes-');
    const changing = `${base}/changing.pdf`;
    // Named twice, and once more on the list on stdin: read once.
    const args = [changing, changing, '-', '--report', 'report.json'];
    const night = async (): Promise<Array<{ file: string; outcome: string; sha256: string | null }>> => {
      const run = await extract(cwd, url(), args, { input: `${changing}\n` });
      expect(run.exitCode, run.stderr).toBe(0);
      return reportOf(cwd);
    };

    const first = await night();
    expect(served).toHaveLength(1);
    expect(first).toMatchObject([{ file: changing, outcome: 'completed', sha256: served[0] }]);
    expect([...(await reservesBySha(url()))]).toEqual([[served[0], 1]]);

    // The source answers other bytes: another document, paid once, under the bytes read.
    const second = await night();
    expect(served).toHaveLength(2);
    expect(served[1]).not.toBe(served[0]);
    expect(second).toMatchObject([{ file: changing, outcome: 'completed', sha256: served[1] }]);
    expect([...(await reservesBySha(url()))].sort()).toEqual(
      [
        [served[0], 1],
        [served[1], 1],
      ].sort(),
    );

    // The source stops changing: its bytes are known, nothing is paid.
    frozen = await invoicePdf(9302);
    const third = await night();
    expect(served).toHaveLength(3);
    expect(served[2]).toBe(served[1]);
    expect(third).toMatchObject([{ file: changing, outcome: 'skipped', sha256: served[1] }]);
    const reserves = await reservesBySha(url());
    expect(reserves.size).toBe(2);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
  });

  it('two URLs that differ only in their query (a download endpoint): two documents, each read, sent and paid once; neither left out', async () => {
    const cwd = tempDir('extract-url-query-');
    const args = [`${base}/download?id=1`, `${base}/download?id=2`, '--report', 'report.json'];
    const run = await extract(cwd, url(), args);
    expect(run.exitCode, run.stderr).toBe(0);
    const report = reportOf(cwd);
    expect(report.map((d) => d.outcome)).toEqual(['completed', 'completed']);
    expect(report.map((d) => d.sha256).sort()).toEqual([sha(byId.get('1')!), sha(byId.get('2')!)].sort());
    expect(readJsonLines(String(run.stdout))).toHaveLength(2);
    const reserves = await reservesBySha(url());
    expect(reserves.size).toBe(2);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
  });

  it('URLs are read -c at a time, never more, and their records keep the order given', async () => {
    const cwd = tempDir('extract-url-parallel-');
    const urls = [1, 2, 3, 4, 5].map((i) => `${base}/held/${i}.pdf`);
    held.total = urls.length;
    const run = await extract(cwd, url(), [...urls, '-c', String(held.at), '--report', 'report.json', '-o', 'out.csv']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/did not answer/);
    expect(held.most).toBe(held.at);
    expect(reportOf(cwd).map((d) => [d.file, d.outcome])).toEqual(urls.map((u) => [u, 'completed']));
    const rows = readFileSync(join(cwd, 'out.csv'), 'utf8').trim().split('\n').slice(1);
    expect(rows.map((r) => urls.findIndex((u) => r.includes(u)))).toEqual([0, 1, 2, 3, 4]);
    const reserves = await reservesBySha(url());
    expect(reserves.size).toBe(5);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
  });
});
