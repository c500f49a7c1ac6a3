import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runGet } from '../../src/commands/get.ts';
import { pollDocument } from '../../src/batch/send/poll.ts';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';
import { ServiceClient } from '../../src/client/service-client.ts';

/**
 * One poll loop (src/batch/send/poll.ts) for the pipeline and `extract get`. A real HTTP
 * server on 127.0.0.1 whose document is processing for its first `busy` GETs, then completed;
 * a fake clock whose sleeps are recorded and advance time at once.
 */

const KEY = 'ext_poll_loop_key_0001';
const servers: Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function documentService(busy: number): Promise<{ url: string; gets: () => number }> {
  let gets = 0;
  const server = createServer((req, res) => {
    req.resume();
    const id = decodeURIComponent(req.url?.split('/').pop() ?? '');
    gets++;
    const done = gets > busy;
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        document_id: id,
        status: done ? 'completed' : 'processing',
        file_name: 'a.pdf',
        page_count: 2,
        results: done ? { total: 12 } : null,
        error: null,
      }),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, gets: () => gets };
}

function fakeClock(): { now: () => number; sleep: (ms: number) => Promise<void>; sleeps: number[] } {
  let t = 1_000_000;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
    sleeps,
  };
}

const deps = () => ({ ...fakeClock(), random: () => 0.5, log: () => {} });

describe('the one poll loop', () => {
  it('polls on the guidance (2 s, 3 s, 4.5 s...) until the document ends, and hands each answer to the caller', async () => {
    const service = await documentService(3);
    const d = deps();
    const client = new ServiceClient({ baseUrl: service.url, apiKey: KEY }, d);
    const seen: string[] = [];
    const end = await pollDocument(
      client,
      'doc_1',
      { policy: DEFAULT_POLL, firstDelay: 2000, nextStep: 1, deps: d },
      (doc) => seen.push(doc.status),
    );
    expect(end).toMatchObject({ end: 'finished', doc: { status: 'completed', results: { total: 12 } } });
    expect(seen).toEqual(['processing', 'processing', 'processing', 'completed']);
    expect(d.sleeps).toEqual([2000, 3000, 4500, 6750]);
  });

  it('ends with timeout and the last answer at the deadline, and with stopped when the signal aborts', async () => {
    const service = await documentService(1000);
    const d = deps();
    const client = new ServiceClient({ baseUrl: service.url, apiKey: KEY }, d);
    const policy = { ...DEFAULT_POLL, timeoutMs: 10_000 };
    const end = await pollDocument(client, 'doc_2', { policy, firstDelay: 0, nextStep: 0, deps: d });
    expect(end).toMatchObject({ end: 'timeout', last: { status: 'processing' } });
    // At once, then 2 s, 3 s, 4.5 s, then what is left of the 10 s (0.5 s).
    expect(d.sleeps).toEqual([2000, 3000, 4500, 500]);
    expect(service.gets()).toBe(5);

    const stop = new AbortController();
    stop.abort();
    const stopped = await pollDocument(client, 'doc_2', {
      policy,
      firstDelay: 0,
      nextStep: 0,
      signal: stop.signal,
      deps: d,
    });
    expect(stopped).toEqual({ end: 'stopped', last: undefined });
    expect(service.gets()).toBe(5);
  });
});

describe('extract get', () => {
  async function get(busy: number, wait: boolean) {
    const service = await documentService(busy);
    const cwd = mkdtempSync(join(tmpdir(), 'extract-get-'));
    dirs.push(cwd);
    let out = '';
    const d = deps();
    const summary = await runGet(
      ['doc_9'],
      {
        baseUrl: service.url,
        apiKey: KEY,
        wait,
        poll: DEFAULT_POLL,
        out: undefined,
        format: undefined,
        explode: undefined,
      },
      {
        ...d,
        cwd,
        stdout: new Writable({
          write: (c, _e, cb) => {
            out += String(c);
            cb();
          },
        }),
        stderr: new Writable({ write: (_c, _e, cb) => cb() }),
      },
    );
    return { summary, out, gets: service.gets(), sleeps: d.sleeps };
  }

  it('without --wait asks once and reports a processing document as pending (exit 5)', async () => {
    const r = await get(2, false);
    expect(r.gets).toBe(1);
    expect(r.sleeps).toEqual([]);
    expect(r.summary.exitCode).toBe(5);
    expect(r.summary.records).toMatchObject([{ document_id: 'doc_9', status: 'pending' }]);
  });

  it('with --wait polls at once, then on the guidance, until the document completes', async () => {
    const r = await get(2, true);
    expect(r.gets).toBe(3);
    expect(r.sleeps).toEqual([2000, 3000]);
    expect(r.summary.exitCode).toBe(0);
    expect(r.summary.records).toMatchObject([{ document_id: 'doc_9', status: 'completed', page_count: 2 }]);
    expect(JSON.parse(r.out.trim())).toMatchObject({ status: 'completed', results: { total: 12 } });
  });
});
