import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import type { StartHttpServer } from '../helpers/http-server.ts';
import { tempDir } from '../helpers/cli.ts';
import { extract, FIXTURES, fixtureNames, readJsonLines } from './batch-helpers.ts';

/**
 * Nulls routed to a person, in batch too, and CI's conventions. A
 * stand-in service answers each inline extract by the file's name: "scan" gets nulls (the
 * service could not read them), "bad" is refused as unreadable, anything else is complete.
 */
async function standIn(httpServer: StartHttpServer) {
  let n = 0;
  const server = await httpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/api/v1/extract') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not here"}');
        return;
      }
      const name = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { file: { name: string } }).file.name);
      const id = `doc_${++n}`;
      if (name.includes('bad')) {
        res.writeHead(422, { 'content-type': 'application/json' }).end('{"error":"the document cannot be read"}');
        return;
      }
      const results = name.includes('scan')
        ? { total: null, customer: { name: 'ACME', email: null }, lines: [{ amount: 3 }] }
        : { total: 12.5, customer: { name: 'ACME', email: 'a@example.com' }, lines: [{ amount: 3 }] };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: true, parser_id: 'par_1', document_id: id, page_count: 1, results }));
    });
  });
  return server.url;
}

function dropFolder(): string {
  const cwd = tempDir('extract-review-');
  mkdirSync(join(cwd, 'in'));
  const [a, b, c] = fixtureNames();
  copyFileSync(join(FIXTURES, a!), join(cwd, 'in', 'good.pdf'));
  copyFileSync(join(FIXTURES, b!), join(cwd, 'in', 'scan.pdf'));
  copyFileSync(join(FIXTURES, c!), join(cwd, 'in', 'bad.pdf'));
  return cwd;
}

const REVIEW = { file_name: 'in/scan.pdf', null_fields: ['total', 'customer.email'] };

describe('nulls routed to a person', () => {
  it('the summary counts them; --report, --review, the records and `extract status --needs-review` name them and their null fields', async ({
    httpServer,
  }) => {
    const url = await standIn(httpServer);
    const cwd = dropFolder();
    const run = await extract(cwd, url, [
      'in/',
      '--route',
      'inline',
      '-o',
      'out.csv',
      '--report',
      'report.json',
      '--review',
      'review.jsonl',
    ]);
    expect(run.exitCode, run.stderr).toBe(1); // bad.pdf failed
    expect(run.stderr).toMatch(/1 with null fields to review/);

    const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as { needs_review: unknown[] };
    expect(report.needs_review).toEqual([{ document_id: expect.stringMatching(/^doc_/), ...REVIEW }]);
    expect(readJsonLines(readFileSync(join(cwd, 'review.jsonl'), 'utf8'))).toEqual(report.needs_review);

    const csv = readFileSync(join(cwd, 'out.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toMatch(/^file,document_id,status,page_count,error,needs_review,/);
    const byFile = new Map(csv.slice(1).map((row) => [row.split(',')[0], row.split(',')[5]]));
    expect(Object.fromEntries(byFile)).toEqual({ 'in/bad.pdf': '', 'in/good.pdf': 'false', 'in/scan.pdf': 'true' });

    // A rerun writes the same from the journal (nothing sent), JSON Lines this time.
    const rerun = await extract(cwd, url, ['in/', '--route', 'inline', '-o', 'out.jsonl', '--review', '-', '-q']);
    expect(readJsonLines(String(rerun.stdout))).toEqual(report.needs_review);
    const records = readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'));
    expect(Object.fromEntries(records.map((r) => [r.file, r.needs_review]))).toEqual({
      'in/bad.pdf': null,
      'in/good.pdf': false,
      'in/scan.pdf': true,
    });

    const status = await extract(cwd, url, ['status', '--needs-review', '--failed', '--json']);
    expect(status.exitCode, status.stderr).toBe(0);
    const view = JSON.parse(String(status.stdout)) as {
      needs_review: number;
      review: unknown[];
      failed_documents: Array<{ file: string }>;
    };
    expect(view.needs_review).toBe(1);
    expect(view.review).toEqual([{ document_id: expect.stringMatching(/^doc_/), ...REVIEW, at: expect.any(String) }]);
    expect(view.failed_documents.map((f) => f.file)).toEqual(['in/bad.pdf']);
    const text = await extract(cwd, url, ['status', '--needs-review', '--failed']);
    expect(String(text.stdout)).toMatch(/needs review \(1\):\n {2}in\/scan\.pdf .* null: total, customer\.email/);
    expect(String(text.stdout)).toMatch(/failed \(1\):\n {2}in\/bad\.pdf /);
  });

  it('--review - and -o - cannot share stdout: a usage error before anything is sent', async () => {
    const cwd = dropFolder();
    const run = await extract(cwd, 'http://127.0.0.1:9', ['in/', '--review', '-']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--review - and the records .* would both go to stdout/);
  });
});

describe('under GitHub Actions', () => {
  it('failed documents are error annotations, null fields warnings, and the summary a table on the job page', async ({
    httpServer,
  }) => {
    const url = await standIn(httpServer);
    const cwd = dropFolder();
    const summaryFile = join(cwd, 'step-summary.md');
    const run = await extract(cwd, url, ['in/', '--route', 'inline', '-o', 'out.jsonl'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: cwd,
        EXTRACT_API_KEY: 'ext_test_key_0001',
        EXTRACT_BASE_URL: url,
        XDG_STATE_HOME: join(cwd, '.state'),
        EXTRACT_CONFIG_DIR: join(cwd, '.config'),
        GITHUB_ACTIONS: 'true',
        GITHUB_STEP_SUMMARY: summaryFile,
      },
    });
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/^::error file=in\/bad\.pdf,title=extract::.+$/m);
    expect(run.stderr).toMatch(
      /^::warning file=in\/scan\.pdf,title=extract: needs review::null fields: total, customer\.email$/m,
    );
    expect(String(run.stdout)).not.toMatch(/::error/); // stdout is the records'
    const md = readFileSync(summaryFile, 'utf8');
    expect(md).toMatch(/\| completed \| 2 \|/);
    expect(md).toMatch(/### Failed[\s\S]*\| in\/bad\.pdf \|/);
    expect(md).toMatch(/### Needs review[\s\S]*\| in\/scan\.pdf \| total, customer\.email \|/);
  });

  it('without GITHUB_ACTIONS, no workflow commands', async ({ httpServer }) => {
    const url = await standIn(httpServer);
    const cwd = dropFolder();
    const run = await extract(cwd, url, ['in/', '--route', 'inline', '-o', 'out.jsonl']);
    expect(run.stderr).not.toMatch(/::(error|warning)/);
  });
});
