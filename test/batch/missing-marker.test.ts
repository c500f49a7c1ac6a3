import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import type { StartHttpServer } from '../helpers/http-server.ts';
import { Writable } from 'node:stream';
import { runStatus } from '../../src/commands/status.ts';
import { DEFAULT_LEASE_MS } from '../../src/journal/state/journal-state.ts';
import { readCsvObjects } from '../outputs/helpers.ts';
import { batchOptions, invoiceDir, journalFacts, run } from './harness.ts';

/**
 * The service as deployed writes what it could not read as the string "-" (tables included),
 * and a model failure on a short document answers every field so. A stand-in answers each
 * inline extract by the file's name: doc-00 all "-", doc-01 some "-" beside real values that
 * only look like it, doc-02 complete.
 */
const ALL_MISSING = {
  total: '-',
  number: '-',
  customer: { name: '-', email: '-' },
  lines: [{ amount: '-', description: '-' }],
};
const SOME_MISSING = {
  total: '-',
  number: '-5',
  ref: 'a-b',
  note: '--',
  spaced: ' - ',
  customer: { name: 'ACME', email: '-' },
  lines: [
    { amount: '-', description: 'bolts' },
    { amount: 3, description: '-' },
  ],
};
const COMPLETE = { total: 12.5, number: 'A-1', customer: { name: 'ACME', email: 'a@example.com' }, lines: [] };

const RAW: Record<string, unknown> = { 'doc-00': ALL_MISSING, 'doc-01': SOME_MISSING, 'doc-02': COMPLETE };

async function deployedStandIn(httpServer: StartHttpServer) {
  let charged = 0;
  const server = await httpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/api/v1/extract') {
        res.writeHead(404, { 'content-type': 'text/html' }).end('<!DOCTYPE html><title>404</title>');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { file: { name: string } };
      const results = RAW[body.file.name.replace(/\.pdf$/, '')];
      const id = `doc_${++charged}`;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: true, parser_id: 'par_1', document_id: id, page_count: 1, results }));
    });
  });
  return { url: server.url, charged: () => charged };
}

const ALL_NULL_FIELDS = [
  'total',
  'number',
  'customer.name',
  'customer.email',
  'lines[0].amount',
  'lines[0].description',
];
const SOME_NULL_FIELDS = ['total', 'customer.email', 'lines[0].amount', 'lines[1].description'];

describe('the service\'s missing marker "-"', () => {
  it('is null in every output, reviewed and counted; real values that only look like it stay; the journal keeps the answer', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(3);
    const summaryFile = join(cwd, 'step-summary.md');
    const options = batchOptions(service.url, 'ext_test_key_0001', {
      route: 'inline',
      out: 'out.csv',
      report: 'report.json',
      review: 'review.jsonl',
    });
    const first = await run(cwd, ['in/'], options, {
      env: { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summaryFile },
    });
    expect(first.summary.exit_code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/2 with null fields to review/);

    const rows = readCsvObjects(readFileSync(join(cwd, 'out.csv'), 'utf8'));
    const byFile = new Map(rows.map((r) => [r.file, r]));
    const all = byFile.get('in/doc-00.pdf')!;
    expect(all.needs_review).toBe('true');
    expect([all.total, all.number, all['customer.name'], all['customer.email']]).toEqual([null, null, null, null]);
    expect(JSON.parse(all.lines!)).toEqual([{ amount: null, description: null }]);
    const some = byFile.get('in/doc-01.pdf')!;
    expect(some.needs_review).toBe('true');
    expect(some.total).toBeNull();
    expect(some['customer.email']).toBeNull();
    // Formula-neutralised as any cell starting with "-", but kept: a real value.
    expect([some.number, some.ref, some.note, some.spaced]).toEqual(["'-5", 'a-b', "'--", ' - ']);
    expect(JSON.parse(some.lines!)).toEqual([
      { amount: null, description: 'bolts' },
      { amount: 3, description: null },
    ]);
    expect(byFile.get('in/doc-02.pdf')!.needs_review).toBe('false');
    expect(rows.flatMap((r) => Object.values(r))).not.toContain("'-");

    const expectedReview = [
      { document_id: expect.stringMatching(/^doc_/), file_name: 'in/doc-00.pdf', null_fields: ALL_NULL_FIELDS },
      { document_id: expect.stringMatching(/^doc_/), file_name: 'in/doc-01.pdf', null_fields: SOME_NULL_FIELDS },
    ];
    const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as { needs_review: unknown[] };
    expect(report.needs_review).toEqual(expectedReview);
    const review = readFileSync(join(cwd, 'review.jsonl'), 'utf8').trim().split('\n');
    expect(review.map((l) => JSON.parse(l) as unknown)).toEqual(expectedReview);

    expect(first.stderr).toMatch(
      /^::warning file=in\/doc-00\.pdf,title=extract: needs review::null fields: total, number, customer\.name/m,
    );
    expect(readFileSync(summaryFile, 'utf8')).toMatch(/\| with null fields to review \| 2 \|/);

    // The journal keeps the answer as the service gave it.
    const completed = journalFacts(cwd).filter((f) => f.fact === 'completed');
    expect(completed.map((f) => (f.fact === 'completed' ? f.results : null))).toContainEqual(SOME_MISSING);

    // extract status --needs-review reads the journal's raw answers the same way.
    const status = async (missingMarker?: string | null) =>
      runStatus(
        {
          state: join(cwd, '.extract-state.jsonl'),
          json: true,
          needsReview: true,
          leaseMs: DEFAULT_LEASE_MS,
          ...(missingMarker !== undefined && { missingMarker }),
        },
        { cwd, stdout: new Writable({ write: (_c, _e, cb) => cb() }), log: () => {}, env: {} },
      );
    const view = await status();
    expect(view.needs_review).toBe(2);
    expect(view.review?.map((r) => [r.file_name, r.null_fields])).toEqual(
      expect.arrayContaining([
        ['in/doc-00.pdf', ALL_NULL_FIELDS],
        ['in/doc-01.pdf', SOME_NULL_FIELDS],
      ]),
    );
    expect((await status(null)).needs_review).toBe(0);

    // A rerun writes the same from the journal's stored text, sending nothing.
    const rerun = await run(cwd, ['in/'], { ...options, out: 'out.jsonl', review: undefined, report: undefined });
    expect(service.charged()).toBe(3);
    expect(rerun.stderr).toMatch(/2 with null fields to review/);
    const records = readFileSync(join(cwd, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; needs_review: boolean; results: unknown });
    expect(records.map((r) => [r.file, r.needs_review])).toEqual([
      ['in/doc-00.pdf', true],
      ['in/doc-01.pdf', true],
      ['in/doc-02.pdf', false],
    ]);
    expect(records[0]!.results).toEqual({
      total: null,
      number: null,
      customer: { name: null, email: null },
      lines: [{ amount: null, description: null }],
    });
    expect(records[1]!.results).toEqual({
      ...SOME_MISSING,
      total: null,
      customer: { name: 'ACME', email: null },
      lines: [
        { amount: null, description: 'bolts' },
        { amount: 3, description: null },
      ],
    });
  });

  it('--no-missing-marker keeps "-" as a value; another marker is read instead', async ({ httpServer }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = await invoiceDir(3);
    const off = await run(
      cwd,
      ['in/'],
      batchOptions(service.url, 'ext_test_key_0001', { route: 'inline', out: 'out.jsonl', missingMarker: null }),
    );
    expect(off.stderr).not.toMatch(/to review/);
    const records = readFileSync(join(cwd, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { needs_review: boolean; results: unknown });
    expect(records.map((r) => r.needs_review)).toEqual([false, false, false]);
    expect(records[1]!.results).toEqual(SOME_MISSING);

    // The same journal, read with "--" as the marker: only doc-01's note is missing.
    const other = await run(
      cwd,
      ['in/'],
      batchOptions(service.url, 'ext_test_key_0001', { route: 'inline', out: 'other.jsonl', missingMarker: '--' }),
    );
    expect(service.charged()).toBe(3);
    const again = readFileSync(join(cwd, 'other.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { needs_review: boolean; results: Record<string, unknown> });
    expect(again.map((r) => r.needs_review)).toEqual([false, true, false]);
    expect(again[1]!.results.note).toBeNull();
    expect(again[1]!.results.total).toBe('-');
    expect(other.stderr).toMatch(/1 with null fields to review/);
  });
});
