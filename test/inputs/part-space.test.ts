import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { processAlive } from '../../src/errno.ts';
import { PartSpace } from '../../src/inputs/part.ts';

/**
 * The run's part space is reclaimed when a run is killed (kill -9 leaves it: release never
 * runs): the next run that writes a part removes the spaces of this user's runs that are gone,
 * and of an earlier version's runs (named without a pid) untouched for a day; never a live run's.
 */

function deadPid(): number {
  for (let pid = 4_000_000; pid > 1000; pid -= 7919) if (!processAlive(pid)) return pid;
  throw new Error('no free pid found');
}

describe('the part space', () => {
  it("a killed run's space, and an earlier version's left a day, are reclaimed by the next run; a live run's, a fresh one and one still written to stay", () => {
    const dir = mkdtempSync(join(tmpdir(), 'extract-part-space-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const killed = join(dir, `extract-parts-${deadPid()}-Kx5i7U`);
    const live = join(dir, `extract-parts-${process.pid}-PZDrNs`);
    const oldVersion = join(dir, 'extract-parts-Du7LRy');
    const oldFresh = join(dir, 'extract-parts-mDRw2T');
    // An earlier version's run still writing into a part it made days ago: its folder's time is old.
    const oldWriting = join(dir, 'extract-parts-Wr1t3s');
    for (const d of [killed, live, oldVersion, oldFresh, oldWriting]) {
      mkdirSync(d);
      writeFileSync(join(d, '0-a.pdf'), '%PDF-1.4\n');
    }
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    utimesSync(join(oldVersion, '0-a.pdf'), twoDaysAgo, twoDaysAgo);
    utimesSync(oldVersion, twoDaysAgo, twoDaysAgo);
    utimesSync(oldWriting, twoDaysAgo, twoDaysAgo);
    // Someone else's name for a link: never followed, never removed.
    symlinkSync(live, join(dir, `extract-parts-${deadPid()}-link`));

    const space = new PartSpace(dir);
    const { fd } = space.create('b.pdf');
    closeSync(fd);
    const left = readdirSync(dir).sort();
    expect(existsSync(killed)).toBe(false);
    expect(existsSync(oldVersion)).toBe(false);
    expect(left).toContain('extract-parts-mDRw2T');
    expect(left).toContain('extract-parts-Wr1t3s');
    expect(left).toContain(`extract-parts-${process.pid}-PZDrNs`);
    expect(left.filter((n) => n.endsWith('-link'))).toHaveLength(1);
    space.release();
    expect(readdirSync(dir).sort()).toEqual(
      left.filter((n) => !n.startsWith(`extract-parts-${process.pid}-`) || n.endsWith('PZDrNs')).sort(),
    );
  });
});
