import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { LedgerBody } from '../../src/contract/index.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { seededRandom } from '../../src/emulator/faults.ts';
import { extract, KEY } from '../e2e/batch-helpers.ts';
import { tempDir, type ServeProcess } from '../helpers/cli.ts';
import { chargesBySha, makeCorpus, readReport, writeServeConfig, type Report } from './helpers.ts';

/**
 * Emulator crashes: `extract serve --data-dir` killed with SIGKILL at seeded random moments
 * of a batch and restarted on the same data directory and port. The client rides it out
 * (retries, resumes polling; a run that still ends in failure is rerun with --retry-failed).
 * In the end: every document completed, none lost or doubled in the documents or the
 * ledger, and every completed document's webhook delivered at least once, those pending at
 * a kill after the restart.
 */

const DOCS = 60;
const KILLS = 4;

describe('emulator crashes', () => {
  it(`serve SIGKILLed ${KILLS} times during a batch of ${DOCS} and restarted on its data directory: nothing lost, nothing doubled, webhooks delivered`, async ({
    hookServer,
    spawnServe,
  }) => {
    const root = tempDir('extract-emucrash-');
    const corpus = await makeCorpus(root, DOCS, 'emu');
    const hook = await hookServer();
    const parser = {
      ...DEFAULT_CONFIG.parsers[0]!,
      webhooks: [{ url: hook.url, method: 'POST' as const, auth: { type: 'none' as const } }],
    };
    const config = writeServeConfig(root, { processing: { ms_per_page: 150, concurrency: 2 }, parsers: [parser] });
    const dataDir = join(root, 'emu-data');
    const serveArgs = ['--data-dir', dataDir, '--config', config, '--no-listen', '--webhook-time-scale', '0.001', '-q'];

    let server: ServeProcess = await spawnServe(serveArgs);
    const url = server.url;
    const port = new URL(url).port;
    const kills: Array<string | undefined> = [];
    const restart = async (): Promise<void> => {
      server.child.kill('SIGKILL');
      kills.push((await server.child).signal);
      server = await spawnServe([...serveArgs, '--port', port]);
      expect(server.url).toBe(url);
    };

    const flags = [
      'in/',
      '--inline-max',
      String(corpus.inlineMax),
      '-c',
      '4',
      '--poll-interval',
      '100ms',
      '--poll-max-interval',
      '500ms',
      '--no-progress',
      '-q',
    ];
    const random = seededRandom(11);
    const run = extract(root, url, [...flags, '--report', 'report-1.json']);
    let exited = false;
    void run.then(() => (exited = true));
    const moments: number[] = [];
    for (let k = 0; k < KILLS && !exited; k++) {
      const at = Math.round(300 + random() * 1200);
      await new Promise((r) => setTimeout(r, at));
      if (exited) break;
      moments.push(at);
      await restart();
    }
    const first = await run;
    // The kills happened while the batch ran (at least one before the first run was over),
    // and each ended serve by SIGKILL, not by a clean stop.
    expect(moments.length, 'the first run ended before any kill').toBeGreaterThanOrEqual(1);
    expect(kills).toEqual(moments.map(() => 'SIGKILL'));

    // A run that ended with failures (an extract request cut by a kill) is rerun; the final state is what counts.
    const exits = [first.exitCode];
    let report: Report = readReport(join(root, 'report-1.json'));
    for (let rerun = 2; exits.at(-1) !== 0 && rerun <= 4; rerun++) {
      const next = await extract(root, url, [...flags, '--retry-failed', '--report', `report-${rerun}.json`]);
      exits.push(next.exitCode);
      report = readReport(join(root, `report-${rerun}.json`));
    }
    expect(
      exits.at(-1),
      JSON.stringify(report.documents.filter((d) => d.outcome !== 'completed' && d.outcome !== 'skipped')),
    ).toBe(0);
    expect(report.documents).toHaveLength(DOCS);

    // Nothing lost: every document the client recorded is there, completed, after the restarts.
    const ids = report.documents.map((d) => d.document_id ?? '');
    expect(new Set(ids).size).toBe(DOCS);
    for (const id of ids) {
      const doc = (await (
        await fetch(`${url}/api/v1/documents/${id}`, { headers: { authorization: `Bearer ${KEY}` } })
      ).json()) as { status: string };
      expect(doc.status, id).toBe('completed');
    }
    // Nothing doubled: one net page per content; per document one reserve and at most one refund.
    const { net } = await chargesBySha(url);
    expect(net.size).toBe(DOCS);
    for (const d of report.documents) expect(net.get(d.sha256 ?? ''), d.file).toBe(1);
    const ledger = LedgerBody.parse(await (await fetch(`${url}/_emulator/ledger`)).json());
    const perDoc = new Map<string, { reserve: number; refund: number }>();
    for (const e of ledger.entries) {
      if (e.document_id === null) continue;
      const c = perDoc.get(e.document_id) ?? { reserve: 0, refund: 0 };
      if (e.kind === 'reserve') c.reserve++;
      if (e.kind === 'refund') c.refund++;
      perDoc.set(e.document_id, c);
    }
    for (const [id, c] of perDoc) {
      expect(c.reserve, id).toBe(1);
      expect(c.refund, id).toBeLessThanOrEqual(1);
    }
    for (const id of ids) expect(perDoc.get(id)).toEqual({ reserve: 1, refund: 0 });
    const interrupted = [...perDoc.values()].filter((c) => c.refund === 1).length;

    // Webhooks: every completed document arrives at least once (the outbox survives the kills).
    const arrived = (): Set<string> =>
      new Set(hook.hits.map((h) => (JSON.parse(h.body) as { document_id: string }).document_id));
    // A wait, not a claim about speed: it ends as soon as the last delivery is in.
    const deadline = Date.now() + 60_000;
    while (ids.some((id) => !arrived().has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const missing = ids.filter((id) => !arrived().has(id));
    expect(missing).toEqual([]);

    console.log(
      `emulator crashes: ${moments.length} SIGKILLs of serve at ${moments.join(', ')} ms into the batch; client exits ${exits.join(' -> ')}; ` +
        `${DOCS} documents completed, ${interrupted} interrupted inline documents refunded, ledger ${ledger.entries.length} entries; ` +
        `${hook.hits.length} webhook requests for ${arrived().size} documents (at least once each)`,
    );
  }, 150_000);
});
