import { readFileSync } from 'node:fs';
import type { RequestListener, ServerResponse } from 'node:http';
import { afterEach, describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { tempDir, writeJson } from '../helpers/cli.ts';
import { call, inlineBody } from '../helpers/emulator.ts';
import { flood, type StartHttpServer } from '../helpers/http-server.ts';
import { invoicePdf } from '../helpers/pdf.ts';

/**
 * Hostile webhook receivers: one that answers with an endless body costs the
 * emulator an excerpt, not the body; one that never answers costs it no CPU while it hangs.
 */

/** Answers left hanging by the never-answering receiver (cut after each test with its server). */
const hanging = new Set<ServerResponse>();
afterEach(() => hanging.clear());

async function listen(httpServer: StartHttpServer, handler: RequestListener): Promise<string> {
  return `${(await httpServer(handler)).url}/hook`;
}

/** CPU time a process used so far, in clock ticks (1/100 s): utime + stime of /proc/<pid>/stat. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe('hostile: webhook receivers', () => {
  it('a receiver that answers 200 with an endless body is delivered, and only an excerpt is read', async ({
    httpServer,
    emulator,
  }) => {
    let written = (): number => 0;
    const url = await listen(httpServer, (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        written = flood(res, 0x61).written;
      });
    });
    const s = await emulator({ parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url, id: 'flood' }] }] });
    expect((await call(s, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(1)) })).status).toBe(200);
    let delivery: { state: string; attempts: Array<{ status: number; response_excerpt: string }> } | undefined;
    for (let i = 0; i < 200 && delivery?.state !== 'delivered'; i++) {
      delivery = (await call(s, 'GET', '/_emulator/deliveries?integration=flood', { key: null })).body.deliveries[0];
      if (delivery?.state !== 'delivered') await new Promise((r) => setTimeout(r, 50));
    }
    expect(delivery?.state).toBe('delivered');
    expect(delivery!.attempts[0]!.status).toBe(200);
    expect(delivery!.attempts[0]!.response_excerpt).toBe('a'.repeat(256));
    console.log(`flooding receiver: ${Math.round(written() / 1024 / 1024)} MB written before the emulator hung up`);
    // The socket buffers hold a few MB at most; the body itself was never read.
    expect(written()).toBeLessThan(32 * 1024 * 1024);
  });

  it('while a delivery hangs, the dispatcher sleeps (no busy loop)', async ({ httpServer, spawnServe }) => {
    let arrived!: () => void;
    const delivered = new Promise<void>((resolve) => (arrived = resolve));
    const url = await listen(httpServer, (_req, res) => {
      hanging.add(res);
      arrived();
    });
    const dir = tempDir();
    const config = writeJson(dir, 'config.json', {
      ...DEFAULT_CONFIG,
      processing: { ms_per_page: 0, concurrency: 1 },
      webhook_delivery: { timeout_ms: 60_000, time_scale: 1 },
      parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url, id: 'hangs' }] }],
    });
    const serve = await spawnServe(['--config', config, '--no-listen', '-q']);
    expect((await call(serve, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(2)) })).status).toBe(200);
    // The delivery is in flight (the receiver holds it); measure two seconds of serve's CPU.
    await delivered;
    expect(hanging.size).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    const before = cpuTicks(serve.child.pid!);
    await new Promise((r) => setTimeout(r, 2000));
    const used = cpuTicks(serve.child.pid!) - before;
    console.log(`dispatcher with a hanging delivery: ${used} ticks of CPU in 2 s`);
    expect(used).toBeLessThan(10); // under 5% of a core: measured 0 ticks, and 24 (12%) with the busy loop
  });
});
