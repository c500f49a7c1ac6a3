import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExtractError } from '../../src/errors.ts';
import { headerLines } from '../../src/inputs/header-file.ts';
import { PartSpace } from '../../src/inputs/part.ts';
import { forgetSecrets, redact } from '../../src/redact.ts';
import { parseHeaders, REMOTE_BOUNDS, RemoteReader, redirectTarget, shownUrl } from '../../src/inputs/remote.ts';
import { tempDir } from '../helpers/cli.ts';

/** A source of documents as object storage and web servers answer: redirects, errors, slow bodies, credentials. */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
let source: Server;
let other: Server;
let base: string;
let otherBase: string;
const seenByOther: IncomingHttpHeaders[] = [];

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

beforeAll(async () => {
  other = createServer((req, res) => {
    seenByOther.push(req.headers);
    res.end(PDF);
  });
  otherBase = await listen(other);
  source = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.startsWith('/a.pdf')) return res.end(PDF);
    if (path === '/private.pdf') {
      if (req.headers.authorization !== 'Bearer s3cr3t') return res.writeHead(403).end('no');
      return res.end(PDF);
    }
    if (path === '/moved') return res.writeHead(302, { location: '/a.pdf' }).end();
    if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    if (path === '/elsewhere') return res.writeHead(307, { location: `${otherBase}/b.pdf` }).end();
    if (path === '/missing.pdf') return res.writeHead(404).end('not here');
    if (path === '/broken.pdf') return res.writeHead(503).end('down');
    if (path === '/large.pdf') return res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000));
    if (path === '/endless.pdf') {
      // No length: the body goes on past the bound.
      res.writeHead(200);
      const more = (): void => {
        if (!res.destroyed) res.write(Buffer.alloc(1024), () => setImmediate(more));
      };
      return more();
    }
    if (path === '/stalls.pdf') {
      res.writeHead(200);
      res.write('%PDF-1.4\n');
      return; // never ends
    }
    res.writeHead(404).end();
  });
  base = await listen(source);
});

afterAll(async () => {
  source.closeAllConnections();
  other.closeAllConnections();
  await Promise.all([new Promise((r) => source.close(r)), new Promise((r) => other.close(r))]);
});

function reader(headers: string[] = [], bounds = REMOTE_BOUNDS): { reader: RemoteReader; space: PartSpace } {
  const space = new PartSpace(tempDir('extract-remote-'));
  return { reader: new RemoteReader({ space, headers, bounds }), space };
}

describe('a URL is an input', () => {
  it('reads the bytes into the part space, named by the URL without its query or credentials', async () => {
    const { reader: r, space } = reader();
    const url = new URL(`${base}/a.pdf?X-Amz-Signature=abc123&X-Amz-Credential=AKIA`);
    url.username = 'user';
    url.password = 'pw';
    const got = await r.read(url.href);
    expect('reason' in got).toBe(false);
    if ('reason' in got) return;
    expect(got.file).toBe(`${base}/a.pdf?…`);
    expect(JSON.stringify(got)).not.toMatch(/abc123|AKIA|pw@|user:/);
    expect(got.remote).toBe(true);
    expect(got.rel).toBe('a.pdf');
    expect(readFileSync(got.path as string)).toEqual(PDF);
    space.release();
  });

  it('follows a redirect on the same origin, and sends the user’s headers there only', async () => {
    const { reader: r } = reader(['Authorization: Bearer s3cr3t']);
    const privately = await r.read(`${base}/private.pdf`);
    expect('reason' in privately).toBe(false);
    const moved = await r.read(`${base}/moved`);
    expect('reason' in moved ? moved.reason : 'read').toBe('read');
    const away = await r.read(`${base}/elsewhere`);
    expect('reason' in away ? away.reason : 'read').toBe('read');
    // The other origin was reached without the credential.
    expect(seenByOther.length).toBe(1);
    expect(seenByOther[0]?.authorization).toBeUndefined();
  });

  it('a failure is the input’s own, with the URL and what to do', async () => {
    const { reader: r } = reader([], { bytes: 2048, redirects: 3, waitMs: 300 });
    const reasons = await Promise.all(
      ['/private.pdf', '/missing.pdf', '/broken.pdf', '/loop', '/large.pdf', '/endless.pdf', '/stalls.pdf'].map(
        async (p) => {
          const got = await r.read(`${base}${p}?token=hush`);
          return 'reason' in got ? got.reason : 'read';
        },
      ),
    );
    const closed = await r.read('http://127.0.0.1:1/x.pdf');
    expect(reasons[0]).toMatch(/HTTP 403.*--header 'Authorization/);
    expect(reasons[1]).toMatch(/HTTP 404/);
    expect(reasons[2]).toMatch(/HTTP 503.*next run/);
    expect(reasons[3]).toMatch(/more than 3 redirects/);
    expect(reasons[4]).toMatch(/larger than 2 KiB|larger than 2048|larger than/);
    expect(reasons[5]).toMatch(/larger than/);
    expect(reasons[6]).toMatch(/did not answer within/);
    expect('reason' in closed ? closed.reason : '').toMatch(/ECONNREFUSED/);
    for (const reason of reasons) expect(reason).not.toContain('hush');
    for (const reason of reasons) expect(reason).toContain(`${base}/`);
  });

  it('a redirect from https to plain http, or to another scheme, is refused', () => {
    expect(() => redirectTarget(new URL('https://a.example/x'), 'http://a.example/y')).toThrow(/plain http: refused/);
    expect(() => redirectTarget(new URL('https://a.example/x'), 'file:///etc/passwd')).toThrow(/file: address/);
    expect(redirectTarget(new URL('http://a.example/x'), '/y').href).toBe('http://a.example/y');
    expect(redirectTarget(new URL('https://a.example/x'), 'https://b.example/y').href).toBe('https://b.example/y');
  });

  it('a --header line without a name is a usage error that does not repeat the line', () => {
    expect(() => parseHeaders(['Bearer s3cr3t'])).toThrow(/Name: value/);
    try {
      parseHeaders(['Bearer s3cr3t']);
    } catch (err) {
      expect(String(err)).not.toContain('s3cr3t');
    }
    expect(parseHeaders(['X-Api-Key:  k '])).toEqual({ 'x-api-key': 'k' });
  });

  it('a --header value with a line break or a NUL is a usage error naming the header, not its value', () => {
    for (const line of ['X-Api-Key: s3cr3t\r\nInjected: 1', 'X-Api-Key: s3cr3t\n', 'X-Api-Key: s3\u0000cr3t']) {
      let caught: unknown;
      try {
        parseHeaders([line]);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ExtractError);
      expect((caught as ExtractError).code).toBe('usage');
      expect(String(caught)).toMatch(/--header X-Api-Key: its value holds a line break/);
      expect(String(caught)).not.toContain('s3cr3t');
    }
  });

  it('shows a URL without credentials or query', () => {
    expect(shownUrl('https://u:p@bucket.example/inv/a.pdf?sig=1')).toBe('https://bucket.example/inv/a.pdf?…');
    expect(shownUrl('https://bucket.example/a.pdf')).toBe('https://bucket.example/a.pdf');
  });
});

describe('the source headers a user gives', () => {
  it('a credential header is never printed again: its value and its token alone are redacted', () => {
    forgetSecrets();
    parseHeaders(['Authorization: Bearer tok-81d2a7f0c9', 'X-Api-Key: k3y-5e7c1b', 'Accept: application/pdf']);
    const line = redact(
      'GET failed: Authorization Bearer tok-81d2a7f0c9, key k3y-5e7c1b, tok-81d2a7f0c9 alone; Accept application/pdf',
    );
    expect(line).not.toContain('tok-81d2a7f0c9');
    expect(line).not.toContain('k3y-5e7c1b');
    // An ordinary header is not a secret: its value stays readable.
    expect(line).toContain('application/pdf');
    forgetSecrets();
  });

  it('a header file saved with a byte-order mark reads its first header', () => {
    const dir = tempDir('extract-header-file-');
    writeFileSync(join(dir, 'headers'), '\uFEFFAuthorization: Bearer abc123456\r\nX-Tenant: 7\r\n', { mode: 0o600 });
    const lines = headerLines(['@headers'], dir, () => {});
    expect(lines).toEqual(['Authorization: Bearer abc123456', 'X-Tenant: 7']);
    expect(parseHeaders(lines)).toMatchObject({ authorization: 'Bearer abc123456', 'x-tenant': '7' });
    forgetSecrets();
  });
});
