import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/client/index.ts';
import { UPLOAD_CHUNK_BYTES } from '../../src/client/upload-body.ts';

/**
 * The PUT reads the file once, into a small ring of reused buffers, and
 * hashes the same buffers. A real HTTP server on 127.0.0.1 hashes what it receives: the bytes
 * must arrive intact (a buffer reused too early would corrupt them) and the client's sha256
 * must be the file's.
 */

const servers: Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** Hashes each PUT body; the first `resets` PUTs are cut after about 1 MB. */
async function storage(resets: number): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  let cut = 0;
  const server = createServer((req, res) => {
    const hash = createHash('sha256');
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
      if (cut < resets && bytes > 1024 * 1024) {
        cut++;
        req.socket.destroy();
      }
    });
    req.on('end', () => {
      received.push(hash.digest('hex'));
      res.writeHead(200).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

async function randomFile(size: number): Promise<{ path: string; sha256: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'extract-put-'));
  dirs.push(dir);
  const bytes = randomBytes(size);
  const path = join(dir, 'big.pdf');
  await writeFile(path, bytes);
  return { path, sha256: createHash('sha256').update(bytes).digest('hex') };
}

const deps = { now: () => Date.now(), sleep: async () => {}, random: () => 0.5, log: () => {} };
const ticket = (url: string) => ({ upload_url: `${url}/put/big.pdf`, storage_path: 'p/big.pdf', expires_in: 900 });

describe('PUT in one read pass', () => {
  it('sends every byte intact through the reused ring, and returns the sha256 of what it sent', async () => {
    // Many more chunks than buffers in the ring, and a last chunk that is not a whole one.
    const size = 40 * UPLOAD_CHUNK_BYTES + 12_345;
    const file = await randomFile(size);
    const s = await storage(0);
    const client = new ServiceClient({ baseUrl: s.url, apiKey: 'ext_put_key_0001' }, deps);
    const put = await client.putBytes(ticket(s.url), {
      path: file.path,
      name: 'big.pdf',
      size,
      type: 'application/pdf',
    });
    expect(s.received).toEqual([file.sha256]);
    expect(put.sha256).toBe(file.sha256);
  });

  it('a PUT cut mid-body is sent again from the start, and the hash is that of the attempt that arrived', async () => {
    const size = 24 * UPLOAD_CHUNK_BYTES;
    const file = await randomFile(size);
    const s = await storage(1);
    const client = new ServiceClient({ baseUrl: s.url, apiKey: 'ext_put_key_0001' }, deps);
    const put = await client.putBytes(ticket(s.url), {
      path: file.path,
      name: 'big.pdf',
      size,
      type: 'application/pdf',
    });
    expect(put.sha256).toBe(file.sha256);
    expect(s.received.at(-1)).toBe(file.sha256);
  });

  it("a file that shrank under its PUT is that file's failure: not retried, and the circuit never hears it", async () => {
    const file = await randomFile(2 * UPLOAD_CHUNK_BYTES);
    const s = await storage(0);
    const client = new ServiceClient({ baseUrl: s.url, apiKey: 'ext_put_key_0001' }, deps);
    const put = client.putBytes(ticket(s.url), {
      path: file.path,
      name: 'big.pdf',
      size: 3 * UPLOAD_CHUNK_BYTES,
      type: 'application/pdf',
    });
    await expect(put).rejects.toThrow('big.pdf shrank while it was being sent');
    expect(s.received.length).toBeLessThanOrEqual(1);
  });
});
