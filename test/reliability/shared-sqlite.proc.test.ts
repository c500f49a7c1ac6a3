import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { extract, readJsonLines } from '../e2e/batch-helpers.ts';
import { cleanEnv, tempDir } from '../helpers/cli.ts';
import { chargesBySha, makeCorpus, readReport, serveConfig } from './helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * One journal many runs share on one machine, without a server: three `extract` processes on
 * overlapping folders, started at once with one `--state j.sqlite`, against an `extract serve`
 * that ignores Idempotency-Key (every extract request is a new document and a charge). None
 * fails because another holds the journal, every document is completed, and each is charged
 * once (the ledger), whichever run met it first.
 */

const KEY = DEFAULT_CONFIG.parsers[0]!.api_keys[0]!;

describe('runs on one machine share a SQLite journal', () => {
  it('three concurrent runs on overlapping folders: none blocked, every document completed and charged once', async ({
    emulator,
  }) => {
    const root = tempDir('extract-shared-sqlite-');
    const corpus = await makeCorpus(root, 30, 'drop');
    // Folders of 20 documents each, every one shared with another folder: 0-19, 10-29, 5-24.
    const folders = [0, 10, 5].map((first, i) => {
      const dir = join(root, `folder-${i}`);
      mkdirSync(dir);
      const names = corpus.names.slice(first, first + 20);
      for (const name of names) copyFileSync(join(corpus.dir, name), join(dir, name));
      return { dir, names };
    });
    const config = serveConfig({
      idempotency_key: false,
      processing: { ms_per_page: 80, concurrency: 8 },
    });
    const server = await emulator(config);
    const state = join(root, 'j.sqlite');
    const args = (i: number): string[] => [
      folders[i]!.dir,
      '--state',
      state,
      '--inline-max',
      String(corpus.inlineMax),
      '-c',
      '2',
      '--poll-interval',
      '100ms',
      '--poll-max-interval',
      '300ms',
      '--lease',
      '2s',
      '--no-progress',
      '-o',
      join(root, `out-${i}.jsonl`),
      '--report',
      join(root, `report-${i}.json`),
    ];
    const run = (i: number) => {
      // Each run from a working directory of its own, as cron, a second checkout and a shell would.
      const cwd = join(root, `cwd-${i}`);
      mkdirSync(cwd, { recursive: true });
      return extract(cwd, server.url, args(i), {
        env: cleanEnv({ EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: server.url, EXTRACT_CONFIG_DIR: join(cwd, '.config') }),
      });
    };

    const runs = await Promise.all([0, 1, 2].map(run));
    expect(
      runs.map((r) => r.exitCode),
      runs.map((r) => r.stderr).join('\n---\n'),
    ).toEqual([0, 0, 0]);
    for (const [i, folder] of folders.entries()) {
      const report = readReport(join(root, `report-${i}.json`));
      expect(report.documents.map((d) => d.file.split('/').pop()).sort()).toEqual(folder.names);
      expect(
        report.documents.every((d) => d.status === 'completed'),
        `run ${i}: ${JSON.stringify(report.documents.filter((d) => d.status !== 'completed'))}`,
      ).toBe(true);
      expect(readJsonLines(readFileSync(join(root, `out-${i}.jsonl`), 'utf8'))).toHaveLength(20);
    }
    const expectChargedOnce = async (): Promise<void> => {
      const { net, reserves } = await chargesBySha(server.url);
      expect(net.size).toBe(30);
      expect([...reserves.values()].every((r) => r === 1)).toBe(true);
      expect([...net.values()].every((p) => p === 1)).toBe(true);
    };
    await expectChargedOnce();
    const sent = [0, 1, 2].map(
      (i) => readReport(join(root, `report-${i}.json`)).documents.filter((d) => d.outcome === 'completed').length,
    );
    console.log(`shared sqlite journal: documents sent per run ${sent.join(' / ')} (30 documents, 60 in the folders)`);
    expect(sent.reduce((a, b) => a + b, 0)).toBe(30);

    // Rerun all three one after the other: nothing is sent again.
    for (const i of [0, 1, 2]) {
      const again = await run(i);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(readReport(join(root, `report-${i}.json`))).toMatchObject({ skipped: 20, completed: 0 });
    }
    await expectChargedOnce();

    // extract status reads the journal: 30 documents completed, by the runs that sent them.
    const status = await extract(root, server.url, ['status', '--state', state, '--json']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ documents: 30, completed: 30, pages_charged: 30 });
  }, 180_000);
});
