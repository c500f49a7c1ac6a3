import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect } from 'vitest';
import { lockPathFor } from '../../src/journal/lock.ts';
import { type CliProcess, type SpawnNode, tempDir } from '../helpers/cli.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Runs racing for one journal's lock, as real processes (a cron job started twice, two
 * terminals): however they meet, exactly one holds the lock at a time. The racers meet by
 * lines on stdin, not by a clock, and a winner holds the lock until every racer has answered:
 * on a loaded machine a race takes longer, and still has one winner.
 */
const RACER = fileURLToPath(new URL('../helpers/lock-racer.ts', import.meta.url));

type Racer = CliProcess & { outcome(): Promise<string> };

async function startRacer(spawnNode: SpawnNode, journal: string, extra: string[] = []): Promise<Racer> {
  const racer = spawnNode([RACER, journal, ...extra]);
  await racer.waitFor(/^ready$/m, 60_000);
  return {
    ...racer,
    outcome: async () => {
      const [line] = await racer.waitFor(/^(won|lost: .*)$/m, 60_000);
      return line;
    },
  };
}

/** Every racer's outcome; then stdin ends, which lets the winner release the lock and exit. */
async function outcomes(racers: Racer[]): Promise<string[]> {
  const all = await Promise.all(racers.map((r) => r.outcome()));
  for (const r of racers) r.child.stdin?.end();
  await Promise.all(racers.map((r) => r.child));
  return all;
}

const go = (racers: Racer[]): void => {
  for (const r of racers) r.child.stdin?.write('go\n');
};

/** One run won; every other was refused, naming the holder; and nothing is left beside the journal. */
function expectOneWinner(all: string[], dir: string): void {
  expect(
    all.filter((o) => o === 'won'),
    all.join('\n'),
  ).toHaveLength(1);
  expect(
    all.filter((o) => o.startsWith('lost: ') && /in use by process/.test(o)),
    all.join('\n'),
  ).toHaveLength(all.length - 1);
  expect(readdirSync(dir)).toEqual([]);
}

describe('lock: runs racing for one journal', () => {
  it('a stale lock (its holder is dead) judged by many runs at once is taken by exactly one', async ({ spawnNode }) => {
    const dir = tempDir('lock-race-');
    const journal = join(dir, 'state.jsonl');
    for (let round = 0; round < 2; round++) {
      // A holder that has exited: its pid is a finished child's.
      const dead = Number(execFileSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).trim());
      writeFileSync(lockPathFor(journal), `${JSON.stringify({ pid: dead, host: hostname(), started: 'x' })}\n`);
      const racers = await Promise.all(Array.from({ length: 6 }, () => startRacer(spawnNode, journal)));
      go(racers);
      expectOneWinner(await outcomes(racers), dir);
    }
  });

  it('a lock being made (its file there, its text not yet written) is never read as a torn one', async ({
    spawnNode,
  }) => {
    const dir = tempDir('lock-race-');
    const journal = join(dir, 'state.jsonl');
    const continueFile = join(tempDir('lock-race-continue-'), 'continue');
    // The maker stops inside its first exclusive write, however long the others take to look.
    const maker = await startRacer(spawnNode, journal, ['--slow-maker', continueFile]);
    const others = await Promise.all(Array.from({ length: 4 }, () => startRacer(spawnNode, journal)));
    go([maker]);
    await maker.waitFor(/^making$/m, 60_000);
    go(others);
    // Every other run has answered while the maker is still inside its write.
    const theirs = await Promise.all(others.map((r) => r.outcome()));
    writeFileSync(continueFile, '');
    const all = await outcomes([maker, ...others]);
    expect(all.slice(1)).toEqual(theirs);
    expectOneWinner(all, dir);
  });
});
