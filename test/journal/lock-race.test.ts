import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { lockPathFor } from '../../src/journal/lock.ts';

/**
 * Runs racing for one journal's lock, as real processes (a cron job started twice, two
 * terminals): however they meet, exactly one holds the lock at a time.
 */
const RACER = fileURLToPath(new URL('../helpers/lock-racer.ts', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function race(journal: string, racers: number): Promise<string[]> {
  // All ask within a few milliseconds of one moment, well after the slowest has started.
  const start = Date.now() + 1500;
  const runs = Array.from({ length: racers }, () =>
    execa(process.execPath, [RACER, journal, String(start), '3000'], { reject: false }),
  );
  return (await Promise.all(runs)).map((r) => (r.exitCode === 0 ? r.stdout.trim() : `crashed: ${r.stderr}`));
}

/** A journal path in a folder of its own, removed after the test. */
function newJournal(): { dir: string; journal: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lock-race-'));
  dirs.push(dir);
  return { dir, journal: join(dir, 'state.jsonl') };
}

/** One run won; every other was refused, naming the holder; and nothing is left beside the journal. */
function expectOneWinner(outcomes: string[], dir: string): void {
  expect(
    outcomes.filter((o) => o === 'won'),
    outcomes.join('\n'),
  ).toHaveLength(1);
  expect(outcomes.filter((o) => o.startsWith('lost: ') && /in use by process/.test(o))).toHaveLength(
    outcomes.length - 1,
  );
  expect(readdirSync(dir)).toEqual([]);
}

describe('lock: runs racing for one journal', () => {
  it('a stale lock (its holder is dead) judged by many runs at once is taken by exactly one', {
    timeout: 30_000,
  }, async () => {
    const { dir, journal } = newJournal();
    for (let round = 0; round < 2; round++) {
      // A holder that has exited: its pid is a finished child's.
      const dead = Number(execFileSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).trim());
      writeFileSync(lockPathFor(journal), `${JSON.stringify({ pid: dead, host: hostname(), started: 'x' })}\n`);
      expectOneWinner(await race(journal, 6), dir);
    }
  });

  // A guard: the window it covers (a lock file made but not yet written) is too short for this
  // race to hit reliably, so it passed on the old code too; the stale-lock race above did not.
  it('a lock being made is never read as a torn one: many runs asking at once, exactly one wins', {
    timeout: 30_000,
  }, async () => {
    const { dir, journal } = newJournal();
    expectOneWinner(await race(journal, 6), dir);
  });
});
