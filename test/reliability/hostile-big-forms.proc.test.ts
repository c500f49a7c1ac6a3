import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { tempDir, writeJson } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Over HTTP, the application's multipart upload and the inbound webhook count
 * bytes as they arrive. A 300 MB file (generated as it is sent, never held whole by the test)
 * is a 413 with a body saying what to do, answered once the limit is passed (before the whole
 * file was sent), and serve goes on serving. Its peak memory meanwhile is not asserted here.
 */

/** POSTs a multipart form with one file of `mib` MiB, stopping as soon as an answer comes. */
function postBigForm(url: string, mib: number): Promise<{ status: number; body: string; sentMib: number }> {
  const boundary = 'b0undary';
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let answered = false;
    let sent = 0;
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      },
      (res) => {
        answered = true;
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode!, body, sentMib: sent });
        });
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const chunk = Buffer.alloc(1024 * 1024, 0x41);
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
    );
    const pump = () => {
      while (!answered && sent < mib) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end(`\r\n--${boundary}--\r\n`);
    };
    pump();
  });
}

describe('hostile: big forms counted as they arrive', () => {
  it('a 300 MB file by app upload and by the inbound webhook: 413 saying what to do, answered before the whole file', {
    timeout: 300_000,
  }, async ({ spawnServe }) => {
    const dir = tempDir();
    const config = writeJson(dir, 'config.json', { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 1 } });
    const serve = await spawnServe(['--config', config, '--data-dir', join(dir, 'data'), '--no-listen']);
    const inbound = (await serve.waitFor(/(http:\S+\/inbound\/\S+)/))[1]!;
    const upload = await postBigForm(`${serve.url}/_emulator/parsers/prs_invoices/documents`, 300);
    expect(upload.status).toBe(413);
    expect(JSON.parse(upload.body).error).toMatch(/upload-and-poll/);
    // Answered once the limit was passed, not after the whole file.
    expect(upload.sentMib).toBeLessThan(300);
    const both = await Promise.all([postBigForm(inbound, 300), postBigForm(inbound, 300)]);
    for (const r of both) expect(r.status).toBe(413);
    // Still serving: an honest upload is accepted.
    const form = new FormData();
    form.append('file', new Blob([await invoicePdf(9)], { type: 'application/pdf' }), 'ok.pdf');
    const ok = await fetch(`${serve.url}/_emulator/parsers/prs_invoices/documents`, { method: 'POST', body: form });
    expect(ok.status).toBe(200);
  });
});
