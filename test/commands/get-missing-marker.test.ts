import { Writable } from 'node:stream';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import type { StartHttpServer } from '../helpers/http-server.ts';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';
import { runGet } from '../../src/commands/get.ts';
import type { MissingMarker } from '../../src/outputs/missing-marker.ts';
import { tempDir } from '../helpers/cli.ts';

/** A service whose stored document holds the deployed service's "-" beside values that only look like it. */
const RESULTS = { total: '-', number: '-5', ref: 'a-b', lines: [{ amount: '-', description: '--' }] };

async function get(httpServer: StartHttpServer, missingMarker?: MissingMarker) {
  const service = await httpServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        document_id: 'doc_1',
        status: 'completed',
        file_name: 'short.pdf',
        page_count: 1,
        results: RESULTS,
        error: null,
      }),
    );
  });
  let out = '';
  await runGet(
    ['doc_1'],
    {
      baseUrl: service.url,
      apiKey: 'ext_get_marker_key_0001',
      wait: false,
      poll: DEFAULT_POLL,
      out: undefined,
      format: undefined,
      explode: undefined,
      ...(missingMarker !== undefined && { missingMarker }),
    },
    {
      now: () => 0,
      sleep: async () => {},
      random: () => 0.5,
      log: () => {},
      cwd: tempDir(),
      stdout: new Writable({
        write: (c, _e, cb) => {
          out += String(c);
          cb();
        },
      }),
      stderr: new Writable({ write: (_c, _e, cb) => cb() }),
    },
  );
  return JSON.parse(out.trim()) as { needs_review: boolean; results: unknown };
}

describe('extract get and the missing marker', () => {
  it('get: shows "-" as null by default, as a run\'s records do; --no-missing-marker shows the answer as the service gave it', async ({
    httpServer,
  }) => {
    expect(await get(httpServer)).toMatchObject({
      needs_review: true,
      results: { total: null, number: '-5', ref: 'a-b', lines: [{ amount: null, description: '--' }] },
    });
    expect(await get(httpServer, null)).toMatchObject({ needs_review: false, results: RESULTS });
  });
});
