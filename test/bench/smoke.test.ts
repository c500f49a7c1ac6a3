import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, expect, test } from 'vitest';

/**
 * bench: every row of `npm run bench -- --tiny` still runs and produces a number. Nothing
 * about speed is asserted: CI machines are shared and noisy, and tiny sizes measure start-up.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type BenchRow = { id: string; figure: number; peerFigure: number; ratio: number };

test('bench: --tiny produces a number for every row', { timeout: 420_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  dirs.push(dir);
  const json = join(dir, 'rows.json');
  const result = await execa(process.execPath, ['bench/run.ts', '--tiny', '--json', json], {
    reject: false,
    timeout: 400_000,
  });
  // A run that died before its report says why (one did, beside a second copy of the suite).
  const ended = `exit ${result.exitCode}${result.signal ? `, ${result.signal}` : ''}`;
  expect(
    existsSync(json),
    `bench wrote no report (${ended}):\n${result.stderr.slice(-3000)}${result.stdout.slice(-1000)}`,
  ).toBe(true);
  const report = JSON.parse(readFileSync(json, 'utf8')) as { rows: BenchRow[]; failures: string[] };
  expect(report.failures, result.stderr.slice(-3000)).toEqual([]);
  expect(result.exitCode).toBe(0);
  const ids = report.rows.map((r) => r.id);
  for (const id of [
    '1a c1',
    '1a c8',
    '2',
    '1b c1',
    '1b c8',
    '3 rss',
    '3 wall',
    '3 put',
    '4 rerun',
    '4 rerun sqlite',
    '4 append',
    '5 version',
    '5 help',
    '6',
    '7 p99',
    '7 engine',
    '7 core',
    '8',
    '9 fact',
    '9 w1',
    '9 w2',
    '9 w3',
    '10 png',
    '10 pdf',
  ]) {
    expect(ids).toContain(id);
  }
  // Issue 26's row 10 (group 12): one row per batch size, named by its size (tiny sizes here).
  expect(ids.filter((id) => id.startsWith('10 mem '))).toHaveLength(3);
  for (const r of report.rows) {
    expect(Number.isFinite(r.figure), `${r.id}: figure`).toBe(true);
    expect(Number.isFinite(r.peerFigure) && r.peerFigure > 0, `${r.id}: comparison`).toBe(true);
    expect(Number.isFinite(r.ratio), `${r.id}: ratio`).toBe(true);
  }
});
