import { randomUUID } from 'node:crypto';
import { closeSync, createReadStream, ftruncateSync, openSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { resolveConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { tempDir, writeJson } from '../helpers/cli.ts';
import { call, inlineBody, KEY } from '../helpers/emulator.ts';
import { exactLedger, formOf, postForm } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it, payload } from '../receiver/helpers.ts';

/**
 * The loopback surface: any web page the user opens can send requests to 127.0.0.1.
 * A DNS-rebinding page carries its own name in Host; a cross-origin page carries Origin and
 * Sec-Fetch-Site. Both are refused, on `serve` and on `listen`; keys are never in a list.
 */

const OPENING = resolveConfig(DEFAULT_CONFIG).credits;

/** undici's request, which (unlike fetch) sends the Host header it is given. */
async function raw(
  url: string,
  init: { method?: 'GET' | 'POST' | 'PUT'; headers?: Record<string, string>; body?: string },
) {
  const res = await request(url, { method: init.method ?? 'GET', headers: init.headers ?? {}, body: init.body });
  const text = await res.body.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* the test asserts on the text */
  }
  return { status: res.statusCode, body: body as { code?: string; error?: string; parsers?: unknown } };
}

/**
 * A multipart/form-data POST of `files` (each a part named `file`), streamed from disk in 1 MB
 * reads: the bytes fetch sends for a FormData of openAsBlob files, at a fraction of the test's
 * CPU (fetch encodes a Blob's 144 MB in small web-stream chunks).
 */
async function postFiles(url: string, files: string[]) {
  const boundary = `extract-test-${randomUUID()}`;
  const heads = files.map((file) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${basename(file)}"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
  );
  const tail = Buffer.from(`--${boundary}--\r\n`);
  const length = files.reduce((sum, file, i) => sum + heads[i]!.length + statSync(file).size + 2, tail.length);
  async function* parts() {
    for (const [i, file] of files.entries()) {
      yield heads[i]!;
      yield* createReadStream(file, { highWaterMark: 1 << 20 });
      yield Buffer.from('\r\n');
    }
    yield tail;
  }
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(length) },
    body: Readable.from(parts()),
  });
  return { status: res.statusCode, body: (await res.body.json()) as { error?: string } };
}

describe('hostile: the loopback surface of serve', () => {
  it('a DNS-rebinding Host is refused (403) everywhere; loopback names and IP literals are served', async ({
    emulator,
  }) => {
    const s = await emulator();
    const port = new URL(s.url).port;
    for (const path of ['/_emulator/parsers', '/_emulator/ledger', '/', '/api/v1/documents/doc_x']) {
      const r = await raw(`${s.url}${path}`, {
        headers: { host: `evil.example:${port}`, authorization: `Bearer ${KEY}` },
      });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
      expect(r.body.error).toContain('DNS-rebinding');
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `app.localhost:${port}`, `[::1]:${port}`]) {
      expect((await raw(`${s.url}/_emulator/health`, { headers: { host } })).status).toBe(200);
    }
  });

  it('a cross-origin upload through the app route is refused and charges nothing; the same origin is served', async ({
    emulator,
  }) => {
    const s = await emulator();
    const form = () => formOf([{ name: 'a.pdf', bytes: Buffer.alloc(0) }]);
    const refused: Array<Record<string, string>> = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of refused) {
      const r = await postForm(`${s.url}/_emulator/parsers/prs_invoices/documents`, form(), headers);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    const pdf = await invoicePdf(1);
    const same = await postForm(
      `${s.url}/_emulator/parsers/prs_invoices/documents`,
      formOf([{ name: 'a.pdf', bytes: pdf }]),
      { origin: s.url, 'sec-fetch-site': 'same-origin' },
    );
    expect(same.status).toBe(200);
    expect((await exactLedger(s, OPENING)).balance).toBe(OPENING - 1);
  });

  it('cross-origin writes to /_emulator/ are refused, and JSON routes take JSON only (no text/plain)', async ({
    emulator,
  }) => {
    const s = await emulator({
      parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url: 'http://127.0.0.1:9/hook', id: 'main' }] }],
    });
    const evil = { origin: 'http://evil.example', 'content-type': 'text/plain' };
    expect(
      (await raw(`${s.url}/_emulator/integrations/main/test`, { method: 'POST', headers: evil, body: '{}' })).status,
    ).toBe(403);
    expect(
      (await raw(`${s.url}/_emulator/credits`, { method: 'POST', headers: evil, body: '{"pages":5}' })).status,
    ).toBe(403);
    expect(
      (
        await raw(`${s.url}/_emulator/faults`, {
          method: 'POST',
          headers: evil,
          body: '{"operation":"documents","effect":{"type":"status","status":500}}',
        })
      ).status,
    ).toBe(403);
    const plain = await raw(`${s.url}/_emulator/credits`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{"pages":5}',
    });
    expect(plain.status).toBe(415);
    expect(
      (
        await raw(`${s.url}/_emulator/integrations/main/test`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: 'x',
        })
      ).status,
    ).toBe(415);
    expect((await exactLedger(s, OPENING)).entries).toHaveLength(0);
    expect((await call(s, 'GET', '/_emulator/faults', { key: null })).body.rules).toHaveLength(0);
  });

  it('/_emulator/parsers shows keys masked; one key is revealed by an explicit same-origin POST', async ({
    emulator,
  }) => {
    const s = await emulator();
    const list = await call(s, 'GET', '/_emulator/parsers', { key: null });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(KEY);
    const reveal = await call(s, 'POST', '/_emulator/parsers/prs_invoices/keys/0/reveal', { key: null });
    expect(reveal.body).toEqual({ key: KEY });
    expect(
      (
        await raw(`${s.url}/_emulator/parsers/prs_invoices/keys/0/reveal`, {
          method: 'POST',
          headers: { origin: 'http://evil.example' },
        })
      ).status,
    ).toBe(403);
    expect((await call(s, 'POST', '/_emulator/parsers/prs_invoices/keys/7/reveal', { key: null })).status).toBe(404);
  });

  it("the app route streams files to disk: 144 MB of uploads raise serve's peak memory by far less", async ({
    spawnServe,
  }) => {
    const dir = tempDir();
    const config = writeJson(dir, 'config.json', { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 1 } });
    const serve = await spawnServe(['--config', config, '--data-dir', join(dir, 'data'), '--no-listen']);
    const pid = serve.child.pid!;
    const peak = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
    // A small file that is no PDF, then three sparse 48 MB ones: the first refuses the request (counted
    // first, nothing charged), so the engine never reads the others; whatever memory grows is the route's.
    const files = [1024, 48 << 20, 48 << 20, 48 << 20].map((size, i) => {
      const file = join(dir, `big-${i}.pdf`);
      const fd = openSync(file, 'w');
      ftruncateSync(fd, size);
      closeSync(fd);
      return file;
    });
    // Warm: the engine's worker starts (and reads a document) before the measure.
    expect((await call(serve, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(2)) })).status).toBe(200);
    const before = peak();
    const r = await postFiles(`${serve.url}/_emulator/parsers/prs_invoices/documents`, files);
    const grew = peak() - before;
    expect(r.status).toBe(422);
    console.log(`app upload of 144 MB: serve peak RSS grew ${Math.round(grew)} MB`);
    // Less than the bytes uploaded: buffered, they would all be in memory at once (garbage chunks awaiting GC remain).
    expect(grew).toBeLessThan(110);
    expect(r.body.error).toContain('nothing from this request was accepted');
    expect(await exactLedger(serve, OPENING)).toMatchObject({ balance: OPENING - 1, sum: OPENING - 1, negative: 0 });
  });
});

describe('hostile: the loopback surface of listen', () => {
  it('a DNS-rebinding Host or a cross-origin page is refused (403) and nothing is written', async ({ receiver }) => {
    const r = await receiver();
    const port = new URL(r.url).port;
    const body = JSON.stringify(payload({ document_id: 'doc_hostile' }));
    const json = { 'content-type': 'application/json' };
    for (const headers of [
      { ...json, host: `evil.example:${port}` },
      { ...json, origin: 'http://evil.example' },
      { ...json, 'sec-fetch-site': 'cross-site' },
    ]) {
      const a = await raw(r.url, { method: 'POST', headers, body });
      expect(a.status).toBe(403);
      expect(a.body.code).toBe('forbidden');
    }
    expect(r.stats().received).toBe(0);
    expect(r.lines.filter((l) => l.startsWith('<-- 403'))).toHaveLength(3);
    // The service's own delivery (no Origin, a loopback Host) is taken.
    expect((await raw(r.url, { method: 'POST', headers: json, body })).status).toBe(200);
  });
});
