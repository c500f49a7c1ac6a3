import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect } from 'vitest';
import { KEY } from '../helpers/emulator.ts';
import { batchOptions, invoiceDir, journalFacts, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * A large file sent by upload is read once, hashed as its bytes are PUT,
 * and its content looked up in the journal before POST extract. hashWhileSendingAbove: 0
 * makes every uploaded file take that path, so real one-page PDFs stand in for 2 GB ones.
 */

const children: ResultPromise[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill();
    await child.catch(() => {});
  }
});

/** upload-url, a PUT read and dropped, extract by storage path, a GET that says completed; prints its port. */
const STAND_IN = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const json = (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  req.resume();
  req.on('end', () => {
    const base = 'http://127.0.0.1:' + server.address().port;
    if (req.url === '/api/v1/upload-url') return json({ upload_url: base + '/put/big.pdf', storage_path: 'p/big.pdf', expires_in: 900 });
    if (req.method === 'PUT') return res.writeHead(200).end();
    if (req.url === '/api/v1/extract') return json({ success: true, document_id: 'doc_big', status: 'processing', poll_url: '/x' });
    json({ document_id: 'doc_big', status: 'completed', file_name: 'big.pdf', page_count: 1, results: {}, error: null });
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const onePass = { route: 'upload' as const, hashWhileSendingAbove: 0 };
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
type Line = { file: string; status: string; document_id: string | null; page_count: number | null };
const lines = (stdout: string): Line[] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

describe('one read pass for large files', () => {
  it('the journal keys the document by the hash taken during the PUT; a renamed copy is recorded, never charged', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(1, 2);
    const first = await run(cwd, ['in'], batchOptions(server.url, KEY, onePass));
    expect(first.summary.exit_code, first.stderr).toBe(0);
    const [done] = lines(first.stdout);
    expect(done).toMatchObject({ status: 'completed', page_count: 2 });
    const sha = sha256(join(cwd, 'in/doc-00.pdf'));
    const facts = journalFacts(cwd);
    expect(facts.map((f) => f.fact)).toEqual(['sending', 'submitted', 'completed']);
    expect(facts.every((f) => f.sha256 === sha)).toBe(true);

    // The same content under another name, in another folder: uploaded (its hash is not known
    // before), looked up, recorded with the first document; no second POST extract.
    mkdirSync(join(cwd, 'renamed'));
    copyFileSync(join(cwd, 'in/doc-00.pdf'), join(cwd, 'renamed/copy.pdf'));
    const second = await run(cwd, ['renamed'], batchOptions(server.url, KEY, onePass));
    expect(second.summary.exit_code, second.stderr).toBe(0);
    expect(lines(second.stdout)).toMatchObject([
      { file: 'renamed/copy.pdf', status: 'completed', document_id: done?.document_id, page_count: 2 },
    ]);
    expect(second.summary.pages_charged).toBe(0);
    const ledger = await ledgerTotals(server.url);
    expect([...ledger.reservesBySha.entries()]).toEqual([[sha, 1]]);
    expect(journalFacts(cwd)).toHaveLength(3);
  });

  it('two copies of new content in one run are sent once; each is recorded with the one document', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(1);
    copyFileSync(join(cwd, 'in/doc-00.pdf'), join(cwd, 'in/doc-00-copy.pdf'));
    const r = await run(cwd, ['in'], batchOptions(server.url, KEY, onePass));
    expect(r.summary.exit_code, r.stderr).toBe(0);
    const out = lines(r.stdout);
    expect(out.map((l) => l.status)).toEqual(['completed', 'completed']);
    expect(out[0]?.document_id).toBe(out[1]?.document_id);
    expect([...(await ledgerTotals(server.url)).reservesBySha.values()]).toEqual([1]);
    expect(r.summary.pages_charged).toBe(1);
  });

  it('reads the file once: bytes read by the process stay near the file size (they were twice it)', async () => {
    // A stand-in in a child process (rchar counts socket reads too) that takes the PUT without storing it.
    const standIn = execa(process.execPath, ['-e', STAND_IN], { stdin: 'ignore', stderr: 'inherit' });
    children.push(standIn);
    const port = await new Promise<string>((resolve) => standIn.stdout?.once('data', (d) => resolve(String(d).trim())));
    const cwd = await invoiceDir(0);
    const size = 32 * 1024 * 1024;
    const bytes = Buffer.alloc(size, 7);
    bytes.write('%PDF-1.7\n', 0, 'latin1');
    writeFileSync(join(cwd, 'in/big.pdf'), bytes);
    const rchar = () => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);
    const before = rchar();
    const r = await run(cwd, ['in'], batchOptions(`http://127.0.0.1:${port}`, 'ext_one_pass_key_0001', onePass));
    const read = rchar() - before;
    expect(r.summary.exit_code, r.stderr).toBe(0);
    expect(read).toBeGreaterThanOrEqual(size);
    expect(read / size).toBeLessThan(1.05);
  });

  it('a large file whose upload fails leaves no fact without a hash; the rerun sends it', async ({ emulator }) => {
    const server = await emulator();
    const cwd = await invoiceDir(1);
    // Storage fails every PUT (a 500 on each of the 6 attempts): the file fails before its hash is known.
    const fault = await fetch(`${server.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'upload', probability: 1, effect: { type: 'status', status: 500 } }),
    });
    expect(fault.status).toBe(200);
    const refused = await run(cwd, ['in'], batchOptions(server.url, KEY, onePass));
    expect(lines(refused.stdout)).toMatchObject([{ status: 'error', document_id: null }]);
    expect(refused.summary.pages_charged).toBe(0);
    expect(journalFacts(cwd)).toEqual([]);

    await fetch(`${server.url}/_emulator/faults`, { method: 'DELETE' });
    const again = await run(cwd, ['in'], batchOptions(server.url, KEY, onePass));
    expect(again.summary.exit_code, again.stderr).toBe(0);
    expect(journalFacts(cwd).map((f) => f.sha256)).toEqual(Array(3).fill(sha256(join(cwd, 'in/doc-00.pdf'))));
    expect([...(await ledgerTotals(server.url)).reservesBySha.values()]).toEqual([1]);
  }, 120_000);
});
