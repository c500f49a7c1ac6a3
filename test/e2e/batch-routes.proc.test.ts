import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import {
  expectedResults,
  extract,
  fixtureNames,
  readJsonLines,
  reservesBySha,
  serveForFile,
  workDir,
} from './batch-helpers.ts';

describe('extract <inputs...> end to end', () => {
  // One serve for the file: each test counts only its own charges (reservesBySha).
  const service = serveForFile();

  it('a mixed batch through both routes; every output format read back; reruns skip and pay nothing', async () => {
    const server = { url: service() };
    const cwd = workDir();
    const names = fixtureNames();

    // 5KB splits the fixtures: the small ones inline, the larger ones upload-and-poll.
    const run = await extract(cwd, server.url, [
      'in/*.pdf',
      '--inline-max',
      '5KB',
      '--poll-interval',
      '100ms',
      '--report',
      'report.json',
    ]);
    expect(run.stderr).not.toMatch(/\x1b\[/);
    expect(run.exitCode, run.stderr).toBe(0);
    const records = readJsonLines(String(run.stdout));
    expect(records).toHaveLength(names.length);
    expect(new Set(records.map((r) => r.route))).toEqual(new Set(['inline', 'upload']));
    for (const r of records) {
      expect(r.status).toBe('completed');
      expect(r.results).toEqual(expectedResults(basename(String(r.file))));
    }
    const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as {
      completed: number;
      documents: unknown[];
      pages_charged: number;
    };
    expect(report.completed).toBe(names.length);
    expect(report.documents).toHaveLength(names.length);

    const before = await reservesBySha(server.url);
    expect([...before.values()].every((n) => n === 1)).toBe(true);

    // Reruns: nothing is sent again, and every output still covers every input in input order.
    for (const out of ['all.json', 'all.jsonl', 'all.csv', 'dir/']) {
      const again = await extract(cwd, server.url, ['in/', '-o', out, '-q']);
      expect(again.exitCode, again.stderr).toBe(0);
    }
    expect(await reservesBySha(server.url)).toEqual(before);

    const inOrder = names.map((n) => `in/${n}`);
    const json = JSON.parse(readFileSync(join(cwd, 'all.json'), 'utf8')) as Array<{ file: string; results: unknown }>;
    expect(json.map((r) => r.file)).toEqual(inOrder);
    for (const r of json) expect(r.results).toEqual(expectedResults(basename(r.file)));
    const jsonl = readJsonLines(readFileSync(join(cwd, 'all.jsonl'), 'utf8'));
    expect(jsonl.map((r) => r.file)).toEqual(inOrder);
    const rows = parse(readFileSync(join(cwd, 'all.csv'), 'utf8'), { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((r) => r.file)).toEqual(inOrder);
    for (const row of rows) {
      const expected = expectedResults(basename(row.file!)) as { invoice_number: string | null; total: number | null };
      expect(row.invoice_number).toBe(expected.invoice_number ?? '');
      expect(row.total).toBe(expected.total === null ? '' : String(expected.total));
    }
    expect(readdirSync(join(cwd, 'dir')).sort()).toEqual(names.map((n) => `${n}.json`));
  });

  it('exit codes: 2 for no input, 2 for a malformed key, 4 for a rejected key', async () => {
    const server = { url: service() };
    const cwd = workDir();
    const none = await extract(cwd, server.url, ['nothing/*.pdf']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('"nothing/*.pdf"');
    const malformed = await extract(cwd, server.url, ['in/'], {
      env: { EXTRACT_API_KEY: 'sk_live_123', EXTRACT_BASE_URL: server.url, PATH: process.env.PATH ?? '' },
    });
    expect(malformed.exitCode).toBe(2);
    expect(malformed.stderr).not.toContain('sk_live_123');
    const wrong = 'ext_not_a_key_of_this_parser';
    const rejected = await extract(cwd, server.url, ['in/01-us-standard.pdf', '--no-state'], {
      env: { EXTRACT_API_KEY: wrong, EXTRACT_BASE_URL: server.url, PATH: process.env.PATH ?? '' },
    });
    expect(rejected.exitCode, rejected.stderr).toBe(4);
    expect(`${rejected.stdout}${rejected.stderr}`).not.toContain(wrong);
  });

  it('--dry-run lists routes and pages, and sends nothing', async () => {
    const server = { url: service() };
    const cwd = workDir();
    const dry = await extract(cwd, server.url, ['in/', '--dry-run', '--inline-max', '5KB']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(String(dry.stdout)).toMatch(/upload\s+2 pages\s+in\/06-table-two-pages\.pdf/);
    expect(String(dry.stdout)).toMatch(/total\s+\d+ credits?/);
    expect((await reservesBySha(server.url)).size).toBe(0);
  });
});
