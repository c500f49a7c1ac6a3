import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { KEY } from '../e2e/batch-helpers.ts';
import { spawnServe, tempDir } from '../helpers/cli.ts';
import { makeCorpus, writeServeConfig } from './helpers.ts';

/**
 * Load: `extract serve` under a bounded burst from loopback, 200 concurrent pollers on GET
 * documents and 20 concurrent upload-and-submit loops, all at once. No errors, resident
 * memory flat (sampled from /proc at start, middle and end), p99 of document reads reported.
 */

const POLLERS = 200;
const READS_PER_POLLER = 60;
const UPLOADERS = 20;
const UPLOADS_PER_UPLOADER = 10;
/**
 * Generous: reads alone keep RSS flat (measured: +4 MB over 72,000 reads), but each burst also
 * extracts 200 documents, and the engine's worker threads grow their heaps lazily up to a
 * plateau (measured: about 630 MB after ~1,000 extractions, flat through 4,800), not a leak.
 */
const RSS_GROWTH_LIMIT_MB = 150;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Math.round(Number(m[1]) / 1024);
}

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

describe('load', () => {
  it(`${POLLERS} concurrent pollers and ${UPLOADERS} concurrent uploads: no errors, memory flat, p99 of reads reported`, async () => {
    const root = tempDir('extract-load-');
    const corpus = await makeCorpus(root, 20, 'load');
    const pdfs = corpus.names.map((n) => readFileSync(join(corpus.dir, n)));
    const server = await spawnServe([
      '--in-memory',
      '--config',
      writeServeConfig(root, { processing: { ms_per_page: 0, concurrency: 2 } }),
      '--no-listen',
      '-q',
    ]);
    const pid = server.child.pid!;
    const dispatcher = new Agent({ connections: POLLERS + UPLOADERS + 10, pipelining: 1 });
    const auth = { authorization: `Bearer ${KEY}` };
    const errors: string[] = [];

    const json = async (
      method: 'GET' | 'POST',
      path: string,
      body?: unknown,
    ): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await request(`${server.url}${path}`, {
        method,
        dispatcher,
        headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
        body: body === undefined ? null : JSON.stringify(body),
      });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };

    // Documents to read: one inline extraction per corpus file.
    const ids: string[] = [];
    for (const [i, pdf] of pdfs.entries()) {
      const r = await json('POST', '/api/v1/extract', {
        file: { data: pdf.toString('base64'), name: corpus.names[i], type: 'application/pdf' },
      });
      expect(r.status).toBe(200);
      ids.push(String(r.body.document_id));
    }
    const latencies: number[] = [];
    let reads = 0;
    let uploads = 0;
    const poller = async (p: number): Promise<void> => {
      for (let i = 0; i < READS_PER_POLLER; i++) {
        const id = ids[(p + i) % ids.length]!;
        const t = performance.now();
        const r = await json('GET', `/api/v1/documents/${id}`);
        latencies.push(performance.now() - t);
        reads++;
        if (r.status !== 200 || r.body.document_id !== id) errors.push(`GET ${id}: ${r.status}`);
      }
    };
    const uploader = async (u: number): Promise<void> => {
      for (let i = 0; i < UPLOADS_PER_UPLOADER; i++) {
        const pdf = pdfs[(u + i) % pdfs.length]!;
        const ticket = await json('POST', '/api/v1/upload-url', {
          file_name: `load-${u}-${i}.pdf`,
          file_type: 'application/pdf',
        });
        if (ticket.status !== 200) {
          errors.push(`upload-url: ${ticket.status}`);
          continue;
        }
        const put = await request(String(ticket.body.upload_url), {
          method: 'PUT',
          dispatcher,
          headers: { 'content-type': 'application/pdf' },
          body: pdf,
        });
        await put.body.text();
        if (put.statusCode !== 200) errors.push(`PUT: ${put.statusCode}`);
        const submitted = await json('POST', '/api/v1/extract', {
          storage_path: ticket.body.storage_path,
          file_name: `load-${u}-${i}.pdf`,
          file_type: 'application/pdf',
          file_size: pdf.length,
        });
        if (submitted.status !== 200 || submitted.body.status !== 'processing')
          errors.push(`extract: ${submitted.status}`);
        uploads++;
      }
    };
    /** One burst: every poller and every uploader at once, each a bounded loop. */
    const burst = () =>
      Promise.all([
        ...Array.from({ length: POLLERS }, (_, p) => poller(p)),
        ...Array.from({ length: UPLOADERS }, (_, u) => uploader(u)),
      ]);

    // A first burst warms up JIT, connection pools and the engine's workers; the baseline follows it.
    await burst();
    const rss = { start: rssMb(pid), middle: 0, end: 0 };
    latencies.length = 0;
    reads = 0;
    uploads = 0;
    const started = performance.now();
    await burst();
    rss.middle = rssMb(pid);
    await burst();
    rss.end = rssMb(pid);
    const seconds = (performance.now() - started) / 1000;
    await dispatcher.close();

    const sorted = [...latencies].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    console.log(
      `load (after a warm-up burst, two measured bursts): ${reads} document reads by ${POLLERS} concurrent pollers and ${uploads} uploads by ${UPLOADERS} concurrent uploaders in ${seconds.toFixed(1)} s ` +
        `(${Math.round(reads / seconds)} reads/s); read latency p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms; ` +
        `serve RSS ${rss.start} -> ${rss.middle} -> ${rss.end} MB (${uploads} documents extracted meanwhile); errors ${errors.length}`,
    );
    expect(errors).toEqual([]);
    expect(reads).toBe(2 * POLLERS * READS_PER_POLLER);
    expect(uploads).toBe(2 * UPLOADERS * UPLOADS_PER_UPLOADER);
    expect(rss.end).toBeLessThan(rss.start + RSS_GROWTH_LIMIT_MB);
    expect((await (await fetch(`${server.url}/_emulator/health`)).json()) as unknown).toEqual({ ok: true });
  }, 120_000);
});
