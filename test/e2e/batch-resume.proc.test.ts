import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalFacts } from '../helpers/journal.ts';
import {
  extract,
  fixtureNames,
  readJsonLines,
  reservesBySha,
  serveForFile,
  straceWorks,
  workDir,
} from './batch-helpers.ts';

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Smoke runs of the real binary: a SIGKILL and a real SIGINT. The 402 then top-up, SIGTERM
 * during the first poll and the poll deadline are held in process, on a fake clock, by
 * test/batch/unattended.test.ts (with pages charged checked against the ledger).
 */

/** How the tests' reruns send: by upload, eight at a time, polled often. */
const RERUN = ['--route', 'upload', '-c', '8', '--poll-interval', '100ms'];
describe('resuming', () => {
  // One serve with engine time (400 ms a page) for the file, so a batch is stopped while it runs;
  // each test counts only its own charges (reservesBySha), and each has a journal of its own.
  const slow = serveForFile({ processing: { ms_per_page: 400, concurrency: 2 } });

  it.skipIf(!straceWorks())(
    'a rerun that finds every file done opens no document: it stats each one and answers from the journal (strace)',
    async () => {
      const server = { url: slow() };
      const cwd = workDir();
      const names = fixtureNames();
      const inDir = join(cwd, 'in');
      // The stat cache trusts only stamps over 2 s old (racy-git): younger files are read again.
      const newest = Math.max(...names.map((n) => statSync(join(inDir, n)).ctimeMs));
      await new Promise((r) => setTimeout(r, Math.max(0, newest + 2100 - Date.now())));
      const first = await extract(cwd, server.url, ['in/', '-o', 'first.jsonl']);
      expect(first.exitCode, first.stderr).toBe(0);
      const trace = join(cwd, 'trace.txt');
      const rerun = await extract(cwd, server.url, ['in/', '-o', 'rerun.jsonl'], { straceTo: trace });
      expect(rerun.exitCode, rerun.stderr).toBe(0);
      const records = (name: string) => readJsonLines(readFileSync(join(cwd, name), 'utf8'));
      expect(records('rerun.jsonl')).toHaveLength(names.length);
      expect(records('rerun.jsonl')).toEqual(records('first.jsonl'));
      const calls = readFileSync(trace, 'utf8')
        .split('\n')
        .filter((l) => l.includes(`"${inDir}/`));
      // Every document is stat'ed (its stamp, for the stat cache)...
      for (const name of names)
        expect(
          calls.some((l) => /stat/.test(l) && l.includes(`/in/${name}"`)),
          name,
        ).toBe(true);
      // ...and none is opened.
      expect(calls.filter((l) => /\bopen(at2?)?\(/.test(l))).toEqual([]);
    },
  );

  describe('stopped mid-batch', () => {
    it('SIGKILL mid-batch, then a rerun completes everything and each document is charged exactly once', async () => {
      const server = { url: slow() };
      const cwd = workDir();
      const names = fixtureNames();
      const first = extract(cwd, server.url, ['in/*.pdf', '--route', 'upload', '-c', '8', '--poll-interval', '100ms']);
      // Kill once every document is submitted (paid for) and before the batch is over.
      await until(() => journalFacts(cwd).filter((l) => l.fact === 'submitted').length === names.length);
      first.kill('SIGKILL');
      await first;
      expect(journalFacts(cwd).filter((l) => l.fact === 'completed').length).toBeLessThan(names.length);

      // The lock of the killed run is stale: the rerun takes it over.
      const second = await extract(cwd, server.url, ['in/*.pdf', ...RERUN]);
      expect(second.exitCode, second.stderr).toBe(0);
      expect(second.stderr).toMatch(/resuming \d+ documents? submitted by an earlier run/);
      const records = readJsonLines(String(second.stdout));
      expect(records).toHaveLength(names.length);
      expect(records.every((r) => r.status === 'completed')).toBe(true);

      const reserves = await reservesBySha(server.url);
      expect(reserves.size).toBe(names.length);
      expect([...reserves.values()].every((n) => n === 1)).toBe(true);
    });

    it('SIGINT: stops submitting, records, prints how to resume, exits 130; the rerun finishes', async () => {
      const server = { url: slow() };
      const cwd = workDir();
      const names = fixtureNames();
      const first = extract(cwd, server.url, ['in/', '--route', 'upload', '-c', '2', '--poll-interval', '100ms']);
      await until(() => journalFacts(cwd).some((l) => l.fact === 'submitted'));
      first.kill('SIGINT');
      const stopped = await first;
      expect(stopped.exitCode, stopped.stderr).toBe(130);
      expect(stopped.stderr).toMatch(/rerun the same command to resume/);
      const second = await extract(cwd, server.url, ['in/', ...RERUN]);
      expect(second.exitCode, second.stderr).toBe(0);
      const reserves = await reservesBySha(server.url);
      expect(reserves.size).toBe(names.length);
      expect([...reserves.values()].every((n) => n === 1)).toBe(true);
    });
  });
});
