import { writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ResultPromise } from 'execa';
import { afterEach, describe, expect } from 'vitest';
import { extract } from '../e2e/batch-helpers.ts';
import { tempDir } from '../helpers/cli.ts';
import { chargesBySha, makeCorpus, readJournalLines, readReport, serveConfig } from './helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * The journal's group commit lets concurrent documents share one write + fdatasync; the fact
 * that matters must still be on disk before its extract request leaves. A stand-in proxy in
 * front of a real `extract serve` SIGKILLs the CLI the moment the k-th POST extract of a run
 * reaches it (then lets the request through, so it is charged and its answer lost: the worst
 * case). At that moment the other documents are anywhere between their "sending" fact and
 * their POST. After each kill, every extract request the service saw must have its "sending"
 * fact, with the same Idempotency-Key, in the journal; a document whose fact was written but
 * whose POST never left is in the journal too. Reruns with --retry-failed then finish the
 * batch with every document completed and charged exactly once.
 */

const DOCS = 60;
const KILL_AT = [3, 9, 2, 14, 5, 7];

type Proxy = { url: string; keys: string[]; close: () => Promise<void> };

async function startKillingProxy(upstream: string, onExtract: (nth: number) => void): Promise<Proxy> {
  const target = new URL(upstream);
  const keys: string[] = [];
  const server = createServer((req, res) => {
    res.on('error', () => {});
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/api/v1/extract') {
        keys.push(String(req.headers['idempotency-key'] ?? ''));
        onExtract(keys.length);
      }
      const headers: IncomingHttpHeaders = { ...req.headers, host: target.host };
      const up = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
});

describe('client killed between its "sending" fact and its POST', () => {
  it(`SIGKILL as the k-th extract request arrives, ${KILL_AT.length} times: every request seen was journaled first; all complete, each charged once`, async ({
    emulator,
  }) => {
    const root = tempDir('extract-kill-post-');
    const corpus = await makeCorpus(root, DOCS, 'post');
    // The service in this process: the client is what is killed (helpers/emulator.ts).
    const server = await emulator(serveConfig());
    let victim: ResultPromise | undefined;
    let killAt = 0;
    let seenBefore = 0;
    proxy = await startKillingProxy(server.url, (nth) => {
      if (nth - seenBefore === killAt) victim?.kill('SIGKILL');
    });
    const flags = ['in/', '--inline-max', String(corpus.inlineMax), '-c', '8', '--poll-interval', '50ms'];
    const journal = join(root, '.extract-state.jsonl');
    writeFileSync(journal, '', { mode: 0o600 });
    flags.push('--state', journal);

    let killed = 0;
    const journaledNotSent = new Set<string>();
    for (const [round, k] of KILL_AT.entries()) {
      killAt = k;
      seenBefore = proxy.keys.length;
      victim = extract(root, proxy.url, [...flags, '--no-progress', '-q', ...(round > 0 ? ['--retry-failed'] : [])]);
      const result = await victim;
      if (result.signal === 'SIGKILL') killed++;
      // The process is gone: what the journal holds now is all a rerun will know.
      const journaled = readJournalLines(journal)
        .facts.filter((f) => f.fact === 'sending')
        .map((f) => String((f.request as { idempotency_key?: unknown } | undefined)?.idempotency_key));
      const seen = new Set(proxy.keys);
      for (const key of proxy.keys.slice(seenBefore))
        expect(journaled.includes(key), `extract request ${key} reached the service without its journal fact`).toBe(
          true,
        );
      // Written and synced, but the POST never left: killed between the fact and the request.
      for (const key of journaled) if (!seen.has(key)) journaledNotSent.add(key);
    }
    expect(killed, 'the kills must land while the batch runs').toBe(KILL_AT.length);

    killAt = 0;
    const final = await extract(root, proxy.url, [...flags, '--retry-failed', '--report', 'report.json', '-q']);
    expect(final.exitCode, final.stderr).toBe(0);
    const report = readReport(join(root, 'report.json'));
    expect(report.documents).toHaveLength(DOCS);
    expect(report.documents.filter((d) => d.status !== 'completed')).toEqual([]);

    // Nothing lost, nothing paid twice: one reserve per document, none refunded.
    const { net, reserves } = await chargesBySha(server.url);
    expect(net.size).toBe(DOCS);
    for (const d of report.documents) {
      expect(reserves.get(d.sha256 ?? ''), d.file).toBe(1);
      expect(net.get(d.sha256 ?? ''), d.file).toBe(1);
    }
    console.log(
      `kill before POST: ${killed} SIGKILLs at extract requests ${KILL_AT.join(', ')} of each run; ` +
        `${proxy.keys.length} extract requests seen in all, each journaled first; ` +
        `${journaledNotSent.size} "sending" facts whose request had not reached the service at a kill (all sent by a later run)`,
    );
  }, 120_000);
});
