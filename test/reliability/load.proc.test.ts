import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { loadServe } from '../../bench/lib/load.ts';
import { KEY } from '../e2e/batch-helpers.ts';
import { tempDir } from '../helpers/cli.ts';
import { makeCorpus, writeServeConfig } from './helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Load: `extract serve` under a bounded burst from loopback, 200 concurrent pollers on GET
 * documents and 20 concurrent upload-and-submit loops, all at once: every read answers the
 * document's bytes, every upload is accepted, serve stays healthy. Its memory across such bursts
 * (flat: a leak of a KB a read shows) and the reads' latency are bench rows ("15 reads rss",
 * "15 mixed rss": bench/rows/bounds.ts), the same load (bench/lib/load.ts), measured there.
 */

const POLLERS = 200;
const UPLOADERS = 20;
const READS = 20;
const UPLOADS = 10;

describe('load', () => {
  it(`${POLLERS} concurrent pollers and ${UPLOADERS} concurrent uploads: no errors, every read and upload answered`, async ({
    spawnServe,
  }) => {
    const root = tempDir('extract-load-');
    // The corpus is made while serve starts.
    const [corpus, server] = await Promise.all([
      makeCorpus(root, 10, 'load'),
      spawnServe([
        '--in-memory',
        '--config',
        writeServeConfig(root, { processing: { ms_per_page: 0, concurrency: 2 } }),
        '--no-listen',
        '-q',
      ]),
    ]);
    const pdfs = corpus.names.map((name) => ({ name, bytes: readFileSync(join(corpus.dir, name)) }));
    const load = await loadServe(server.url, KEY, pdfs, { pollers: POLLERS, uploaders: UPLOADERS });
    try {
      const r = await load.burst(READS, UPLOADS);
      expect(r.errors).toEqual([]);
      expect(r.reads).toBe(POLLERS * READS);
      expect(r.uploads).toBe(UPLOADERS * UPLOADS);
    } finally {
      await load.close();
    }
    expect((await (await fetch(`${server.url}/_emulator/health`)).json()) as unknown).toEqual({ ok: true });
  }, 120_000);
});
