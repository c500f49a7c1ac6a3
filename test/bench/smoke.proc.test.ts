import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { expect, test } from 'vitest';

/**
 * bench: every row of `npm run bench -- --tiny` still runs and produces a number. Nothing
 * about speed is asserted: CI machines are shared and noisy, and tiny sizes measure start-up.
 *
 * The groups run in two halves at once (`--only`), each a bench process of its own: one run of
 * every group one after the other was the suite's longest file (88 s, mostly one core busy).
 * With --tiny's groups cut to the fewest processes (2026-11-27), one process still took 115 s
 * against the halves' 95 s, for the same CPU (31 s, machine at load 23-25): halves kept.
 * Together the halves must run every group the bench has: a new group the lists here do not
 * name fails the last test.
 */

type BenchRow = { id: string; figure: number; peerFigure: number; ratio: number };
type Report = { rows: BenchRow[]; failures: string[]; groups: string[]; ran: string[] };

const HALVES = [
  {
    only: '1,3,4,5,6,7,11,16',
    ids: [
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
      '11 jsonl 1k',
      '11 sqlite 1k',
      '16 rss',
      '16 wall',
    ],
  },
  {
    only: '8,9,10,12,13,14,15,17',
    ids: [
      '8',
      '9 fact',
      '9 w1',
      '9 w2',
      '9 w3',
      '10 png',
      '10 pdf',
      '13 watch rss 40',
      '13 watch send 40',
      '14 size',
      '14 full',
      '14 version',
      '14 help',
      '15 reads rss',
      '15 mixed rss',
      '15 listen mem',
      '15 wide ack',
      '15 wide rss',
      '15 big rss',
      '17 archive wall',
      '17 archive mem',
    ],
  },
];

const reports: Report[] = [];

test.concurrent.for(HALVES)(
  'bench: --tiny --only $only produces a number for every row',
  { timeout: 420_000 },
  // Concurrent tests assert with their own context's expect.
  async ({ only, ids: expected }, { expect, onTestFinished }) => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const json = join(dir, 'rows.json');
    const result = await execa(process.execPath, ['bench/run.ts', '--tiny', '--only', only, '--json', json], {
      reject: false,
      timeout: 400_000,
    });
    // A run that died before its report says why (one did, beside a second copy of the suite).
    const ended = `exit ${result.exitCode}${result.signal ? `, ${result.signal}` : ''}`;
    expect(
      existsSync(json),
      `bench wrote no report (${ended}):\n${result.stderr.slice(-3000)}${result.stdout.slice(-1000)}`,
    ).toBe(true);
    const report = JSON.parse(readFileSync(json, 'utf8')) as Report;
    reports.push(report);
    expect(report.failures, result.stderr.slice(-3000)).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(report.ran.join(',')).toBe(only);
    const ids = report.rows.map((r) => r.id);
    for (const id of expected) expect(ids).toContain(id);
    // Row 10 (group 12): one row per batch size, named by its size (--tiny runs two).
    if (report.ran.includes('12')) expect(ids.filter((id) => id.startsWith('10 mem '))).toHaveLength(2);
    for (const r of report.rows) {
      expect(Number.isFinite(r.figure), `${r.id}: figure`).toBe(true);
      expect(Number.isFinite(r.peerFigure) && r.peerFigure > 0, `${r.id}: comparison`).toBe(true);
      expect(Number.isFinite(r.ratio), `${r.id}: ratio`).toBe(true);
    }
  },
);

test('bench: the two halves ran every group of the bench', () => {
  expect(reports).toHaveLength(HALVES.length);
  const ran = reports.flatMap((r) => r.ran).sort();
  expect(ran).toEqual([...(reports[0]?.groups ?? [])].sort());
});
