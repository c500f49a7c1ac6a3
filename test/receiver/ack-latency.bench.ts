/**
 * Measures how fast `extract listen` acknowledges: 1000 events sent one after another
 * over HTTP (so each latency is the ack alone), then the time until all are processed.
 *   node test/receiver/ack-latency.bench.ts [records.jsonl|records.csv] (no argument: stdout)
 * Not a test (vitest runs *.test.ts only): figures depend on the disk's fsync.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { startReceiver } from '../../src/receiver/index.ts';

const EVENTS = 1000;
const out = process.argv[2];
const dir = mkdtempSync(join(tmpdir(), 'extract-listen-bench-'));
const stdout = new PassThrough().resume();
const receiver = await startReceiver(
  {
    auth: { type: 'bearer', token: 't' },
    port: 0,
    dataDir: join(dir, 'inbox'),
    out: out === undefined ? undefined : join(dir, out),
    log: () => {},
  },
  { stdout },
);
const body = (i: number): string =>
  JSON.stringify({
    event: 'document.processed',
    parser_id: 'prs_bench',
    parser_name: 'Invoices',
    document_id: `doc_${i}`,
    timestamp: '2024-01-01T00:00:00.000Z',
    data: { invoice_number: `INV-${i}`, total: null, lines: [{ description: 'Widget', amount: 1.5 }] },
    metadata: { file_name: `invoice-${i}.pdf`, mime_type: 'application/pdf', source_type: 'api', page_count: 1 },
  });

const latencies: number[] = [];
const start = performance.now();
for (let i = 0; i < EVENTS; i++) {
  const sent = performance.now();
  const res = await fetch(receiver.url, {
    method: 'POST',
    headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
    body: body(i),
  });
  await res.arrayBuffer();
  latencies.push(performance.now() - sent);
}
const allSent = performance.now() - start;
await receiver.drained();
const allDone = performance.now() - start;
await receiver.close();
rmSync(dir, { recursive: true, force: true });

latencies.sort((a, b) => a - b);
const at = (q: number): string => `${latencies[Math.floor(q * (latencies.length - 1))]!.toFixed(2)} ms`;
console.log(
  `${out ?? 'stdout'}: ack p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)}; ` +
    `${EVENTS} acknowledged in ${allSent.toFixed(0)} ms, all processed and written in ${allDone.toFixed(0)} ms`,
);
