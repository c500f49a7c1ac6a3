import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { journalFacts } from '../helpers/journal.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { extract, fixtureNames, ledger, reservesBySha, serveForFile, workDir } from './batch-helpers.ts';

/**
 * The built CLI against `extract serve --profile deployed` (in the test's process): the service
 * as its deployed application behaves (inline only, a serverless body limit, `"-"` for missing
 * values, Idempotency-Key ignored), so every extract request is a charge the ledger shows.
 */

// A body limit the bundled invoices fit under and an 80-page invoice does not.
const deployed = serveForFile({ profile: 'deployed', deployed: { max_body_bytes: 30_000 } });
const slowDeployed = serveForFile({
  profile: 'deployed',
  processing: { ms_per_page: 400, concurrency: 4 },
});

/** Until `check` holds, a poll every 50 ms (the test's own time-out bounds it). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('a night against the deployed service', () => {
  it('every small file completes, the large one fails costing nothing, pages charged equal the ledger, "-" is null for review; the rerun sends nothing', async () => {
    const url = deployed();
    const cwd = workDir();
    const names = fixtureNames();
    const big = await invoicePdf(9000, 80);
    expect(big.length * (4 / 3)).toBeGreaterThan(30_000);
    writeFileSync(join(cwd, 'in', 'zz-eighty-pages.pdf'), big);

    const first = await extract(cwd, url, ['in/', '-o', 'out.csv', '--report', 'report.json']);
    expect(first.stderr).not.toMatch(/unexpected error|\n\s+at |is not the extraction service|HTML page/);
    expect(first.exitCode, first.stderr).toBe(1);
    expect(first.stderr).toMatch(/too large for this service's inline route/);
    const summary = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as Record<string, unknown>;
    expect(summary).toMatchObject({ completed: names.length, failed: 1 });
    const charged = [...(await ledger(url)).entries].reduce(
      (n, e) => n + (e.kind === 'reserve' ? e.pages : e.kind === 'refund' ? -e.pages : 0),
      0,
    );
    expect(summary.pages_charged).toBe(charged);
    const rows = parse(readFileSync(join(cwd, 'out.csv'), 'utf8'), { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(names.length + 1);
    // The deployed marker never reaches a cell: a missing value is an empty cell, and its document needs review.
    for (const row of rows) for (const [column, value] of Object.entries(row)) expect(value, column).not.toBe('-');
    expect(rows.filter((r) => r.needs_review === 'true').length).toBeGreaterThan(0);
    expect(rows.find((r) => r.file === 'in/zz-eighty-pages.pdf')).toMatchObject({ status: 'error' });
    const reserves = await reservesBySha(url);
    expect(reserves.size).toBe(names.length);

    const again = await extract(cwd, url, ['in/', '-o', 'out.csv']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(await reservesBySha(url)).toEqual(reserves);
  });

  it('SIGKILL mid-run: nothing charged twice; every document not in flight at the kill completed by the rerun', async () => {
    const url = slowDeployed();
    const cwd = workDir();
    const names = fixtureNames();
    const first = extract(cwd, url, ['in/', '-c', '4']);
    await until(() => journalFacts(cwd).filter((f) => f.fact === 'completed').length >= 4);
    first.kill('SIGKILL');
    await first;
    const inFlight = new Set(
      journalFacts(cwd)
        .filter((f) => f.fact === 'sending')
        .map((f) => f.sha256),
    );
    for (const f of journalFacts(cwd)) if (f.fact !== 'sending') inFlight.delete(f.sha256);
    expect(inFlight.size).toBeLessThanOrEqual(4);

    const rerun = await extract(cwd, url, ['in/', '-o', 'out.jsonl']);
    expect(rerun.stderr).not.toMatch(/unexpected error|\n\s+at /);
    const records = readFileSync(join(cwd, 'out.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { status: string; file: string });
    expect(records).toHaveLength(names.length);
    expect(records.filter((r) => r.status === 'completed').length).toBe(names.length - inFlight.size);
    expect(rerun.exitCode, rerun.stderr).toBe(inFlight.size === 0 ? 0 : 1);
    const reserves = await reservesBySha(url);
    expect([...reserves.values()].every((n) => n === 1)).toBe(true);
  });
});
