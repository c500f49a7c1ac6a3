import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { extract, KEY, readJsonLines, reservesBySha, serveForFile } from './batch-helpers.ts';

/**
 * URLs as inputs on the built CLI: read from a source that is not the service (object storage, a
 * web server), each document paid once however often it is read, the user's credential sent to
 * the source only, never shown, and the service's key never sent there.
 */

const url = serveForFile();
let source: Server;
let base: string;
const requests: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
const docs = new Map<string, Buffer>();

beforeAll(async () => {
  docs.set('/inv/1.pdf', await invoicePdf(8101));
  docs.set('/inv/2.pdf', await invoicePdf(8102));
  docs.set('/inv/two-pages.pdf', await invoicePdf(8103, 2));
  source = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ path, headers: req.headers });
    if (path.startsWith('/locked/') && req.headers.authorization !== 'Bearer s3cr3t-token')
      return res.writeHead(401).end();
    const basic = `Basic ${Buffer.from('alice:hunter2-pw').toString('base64')}`;
    if (path.startsWith('/basic/') && req.headers.authorization !== basic) return res.writeHead(401).end();
    if (path === '/login') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>');
    const body = docs.get(path.replace(/^\/(locked|basic)/, ''));
    if (body === undefined) return res.writeHead(404).end('no such object');
    res.writeHead(200, { 'content-type': 'application/pdf', etag: '"v1"' }).end(body);
  });
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
});

afterAll(async () => {
  source.closeAllConnections();
  await new Promise((resolve) => source.close(resolve));
});

/** Every byte the run left: records, stderr, the journal and state folders. */
function everythingWritten(cwd: string, out: string[]): string {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.push(readFileSync(path, 'latin1'));
    }
  };
  walk(cwd);
  return [...out, ...files].join('\n');
}

describe('URLs are inputs, the built CLI', () => {
  it('reads each URL, pays each document once over reruns, and a missing one is its own failure', async () => {
    const cwd = tempDir('extract-urls-');
    const args = [
      `${base}/inv/1.pdf`,
      `${base}/inv/2.pdf?X-Amz-Signature=feedface`,
      `${base}/inv/3.pdf`,
      `${base}/login`,
    ];
    const first = await extract(cwd, url(), args);
    expect(first.exitCode, first.stderr).toBe(1);
    const records = readJsonLines(String(first.stdout));
    // Records come as documents end: the two sent may end in either order.
    expect(records.map((r) => [r.file, r.status]).sort()).toEqual([
      [`${base}/inv/1.pdf`, 'completed'],
      [`${base}/inv/2.pdf?…`, 'completed'],
      [`${base}/inv/3.pdf`, 'error'],
    ]);
    expect(first.stderr).toMatch(/inv\/3\.pdf: the source answered HTTP 404/);
    expect(first.stderr).not.toContain('feedface');
    // A page that is not a document (a login page) is listed, not paid for.
    expect(first.stderr).toMatch(/login/);

    // Read again the next night (listed on stdin this time): known by content, nothing paid.
    const before = requests.length;
    const second = await extract(cwd, url(), ['-'], { input: `${base}/inv/1.pdf\n${base}/inv/2.pdf?sig=other\n` });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(requests.length - before).toBe(2);
    expect(readJsonLines(String(second.stdout)).map((r) => r.status)).toEqual(['completed', 'completed']);
    const reserves = await reservesBySha(url());
    expect(reserves.size).toBe(2);
    expect([...reserves.values()]).toEqual([1, 1]);
    expect(everythingWritten(cwd, [String(first.stdout), first.stderr, second.stderr])).not.toContain('feedface');
  });

  it('a URL cut to its first page is sent cut, and --move-done moves nothing of the run’s own copy', async () => {
    const cwd = tempDir('extract-urls-');
    mkdirSync(join(cwd, 'done'));
    const run = await extract(cwd, url(), [`${base}/inv/two-pages.pdf`, '--pages', '1', '--move-done', 'done']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readJsonLines(String(run.stdout)).map((r) => [r.file, r.status])).toEqual([
      [`${base}/inv/two-pages.pdf#pages=1`, 'completed'],
    ]);
    expect(readdirSync(join(cwd, 'done'), { recursive: true })).toEqual([]);
  });

  it('--header goes to the source only; it and the service key appear nowhere', async () => {
    const cwd = tempDir('extract-urls-');
    const before = requests.length;
    const denied = await extract(cwd, url(), [`${base}/locked/inv/1.pdf`]);
    expect(denied.exitCode).toBe(1);
    expect(denied.stderr).toMatch(/HTTP 401.*--header 'Authorization/);
    const run = await extract(cwd, url(), [
      `${base}/locked/inv/1.pdf`,
      '--header',
      'Authorization: Bearer s3cr3t-token',
      '-o',
      'out.jsonl',
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'))[0]?.status).toBe('completed');
    const seen = requests.slice(before);
    expect(seen.map((r) => r.headers.authorization)).toEqual([undefined, 'Bearer s3cr3t-token']);
    expect(JSON.stringify(seen)).not.toContain(KEY);
    expect(everythingWritten(cwd, [String(run.stdout), run.stderr])).not.toContain('s3cr3t-token');

    const bad = await extract(cwd, url(), [`${base}/inv/1.pdf`, '--header', 's3cr3t-token']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--header takes 'Name: value'/);
    expect(bad.stderr).not.toContain('s3cr3t-token');
  });

  it("--header @FILE reads the source's headers from a file (as curl's -H @file), kept out of ps; typed on the command line, a credential gets a note; a file others can read, a chmod 600 note", async () => {
    const cwd = tempDir('extract-urls-');
    const before = requests.length;
    // Outside the run's folder, which is searched for the token below.
    const headers = join(tempDir('extract-headers-'), 'source-headers');
    writeFileSync(headers, '\nAuthorization: Bearer s3cr3t-token\r\nX-Trace: nightly\n', {
      mode: 0o600,
    });
    chmodSync(headers, 0o600);
    const args = [`${base}/locked/inv/1.pdf`, '--header', `@${headers}`, '-o', 'out.jsonl'];
    const run = await extract(cwd, url(), args);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'))[0]?.status).toBe('completed');
    expect(requests.slice(before).map((r) => [r.headers.authorization, r.headers['x-trace']])).toEqual([
      ['Bearer s3cr3t-token', 'nightly'],
    ]);
    // What ps shows of the run is its arguments: the credential is not among them, and nothing is noted.
    expect(args.join(' ')).not.toContain('s3cr3t-token');
    expect(run.stderr).not.toMatch(/note:/);
    expect(everythingWritten(cwd, [String(run.stdout), run.stderr])).not.toContain('s3cr3t-token');

    chmodSync(headers, 0o644);
    const open = await extract(cwd, url(), args);
    expect(open.exitCode, open.stderr).toBe(0);
    expect(open.stderr).toContain(
      `note: the header file ${headers} can be read by other users of this machine (mode 644): chmod 600`,
    );
    const typed = await extract(cwd, url(), [
      `${base}/locked/inv/1.pdf`,
      '--header',
      'Authorization: Bearer s3cr3t-token',
    ]);
    expect(typed.exitCode, typed.stderr).toBe(0);
    expect(typed.stderr).toContain(
      'note: a credential in --header is visible to other users of this machine (ps); prefer --header @FILE',
    );

    const missing = await extract(cwd, url(), [`${base}/inv/1.pdf`, '--header', '@no-such-file']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/--header @no-such-file: cannot read it \(no such file\)/);
    writeFileSync(join(cwd, 'bad-headers'), 's3cr3t-token\n', { mode: 0o600 });
    const bad = await extract(cwd, url(), [`${base}/inv/1.pdf`, '--header', '@bad-headers']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--header takes 'Name: value'/);
    expect(bad.stderr).not.toContain('s3cr3t-token');
  });

  it('a URL’s user:password is sent to its source as Basic; it and a presigned query appear in no output, --json included', async () => {
    const cwd = tempDir('extract-urls-');
    const withPassword = base.replace('http://', 'http://alice:hunter2-pw@');
    const run = await extract(cwd, url(), [
      `${withPassword}/basic/inv/1.pdf`,
      `${base}/inv/2.pdf?X-Amz-Signature=c0ffee5ecret`,
      '--json',
      '-v',
      '--report',
      'report.json',
      '-o',
      'out.jsonl',
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const records = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
    expect(records.map((r) => [r.file, r.status])).toEqual([
      [`${base}/basic/inv/1.pdf`, 'completed'],
      [`${base}/inv/2.pdf?…`, 'completed'],
    ]);
    expect(run.stderr).toContain(
      'note: the password in a URL is visible to other users of this machine (ps); prefer a list of URLs on standard input (-)',
    );
    const started = readJsonLines(String(run.stdout)).find((e) => e.event === 'started');
    expect(started?.inputs).toEqual([`${base}/basic/inv/1.pdf`, `${base}/inv/2.pdf?…`]);
    const written = everythingWritten(cwd, [String(run.stdout), run.stderr]);
    expect(written).not.toContain('hunter2-pw');
    expect(written).not.toContain('c0ffee5ecret');
  });
});
