import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { extract, serve } from '../e2e/batch-helpers.ts';

/**
 * What a user meets at the command surface, on the built CLI: bare `extract` answers with a
 * short usage, `get` of an unknown id says so on stderr, `status` shows the workers that matter
 * now, and a dry run says a route's reason once.
 */
const count = (text: string, part: string): number => text.split(part).length - 1;

describe('the command surface (built CLI)', () => {
  it('bare "extract": a short usage on stderr (what it does, the common commands, where the rest is), exit 2', async () => {
    const cwd = tempDir();
    const r = await extract(cwd, 'http://127.0.0.1:1', []);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.length, r.stderr).toBeLessThanOrEqual(12);
    for (const part of ['extract watch', 'extract get', 'extract status', 'extract --help'])
      expect(r.stderr).toContain(part);
    // Not the full help: no option list.
    expect(r.stderr).not.toContain('--poll-max-interval');
  });

  it('"extract get doc_x": a plain error on stderr and exit 1, nothing on stdout; --json keeps it as a JSON record', async () => {
    const { url } = await serve();
    const cwd = tempDir();
    const r = await extract(cwd, url, ['get', 'doc_x']);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^extract: doc_x: .*not found/im);
    expect(r.stderr).not.toContain('{');

    const json = await extract(cwd, url, ['get', 'doc_x', '--json']);
    expect(json.exitCode, json.stderr).toBe(1);
    const record = JSON.parse(json.stdout.trim()) as Record<string, unknown>;
    expect(record).toMatchObject({ document_id: 'doc_x', status: 'error' });
  });

  it('"extract status" lists the live workers and those of the last run, and counts the earlier ones', async () => {
    const { url } = await serve();
    const cwd = tempDir();
    for (const n of [1, 2, 3]) {
      writeFileSync(join(cwd, `i${n}.pdf`), await invoicePdf(n));
      const r = await extract(cwd, url, [`i${n}.pdf`, '--state', 'j.sqlite', '-o', `o${n}.jsonl`, '-q']);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const status = await extract(cwd, url, ['status', '--state', 'j.sqlite']);
    expect(status.exitCode, status.stderr).toBe(0);
    const workerLines = status.stdout.split('\n').filter((l) => /completed, \d+ failed, \d+ pages;/.test(l));
    expect(workerLines, status.stdout).toHaveLength(1);
    expect(status.stdout).toContain('2 earlier workers not shown');
    // The JSON view keeps every worker: a script counts them itself.
    const json = await extract(cwd, url, ['status', '--state', 'j.sqlite', '--json']);
    expect((JSON.parse(json.stdout) as { workers: unknown[] }).workers).toHaveLength(3);
  });

  it('--dry-run says why a route was chosen once, not on every line', async () => {
    const cwd = tempDir();
    for (const n of [1, 2, 3]) writeFileSync(join(cwd, `i${n}.pdf`), await invoicePdf(n));
    const r = await extract(cwd, 'http://127.0.0.1:1', ['.', '--dry-run', '--no-state']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(count(r.stdout, 'at most --inline-max'), r.stdout).toBe(1);
    expect(r.stdout).toMatch(/i1\.pdf/);
    expect(r.stdout).toMatch(/i3\.pdf/);
  });
});
