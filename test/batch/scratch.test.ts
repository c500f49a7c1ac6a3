import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PlanStore } from '../../src/batch/plan/planned.ts';
import type { Job } from '../../src/batch/plan/jobs.ts';
import { RecordSpool } from '../../src/batch/records.ts';
import { Scratch } from '../../src/batch/scratch.ts';
import type { ReportEntry } from '../../src/batch/summary.ts';
import { completedRecord } from '../../src/outputs/record.ts';
import { tempDir } from '../helpers/cli.ts';

/**
 * The run's temporary state in one place: its plan and its records are tables of one temporary
 * SQLite database, which leaves no file behind and is closed with the last of them (a watcher's
 * summary outlives its plan, not the next cycle).
 */

const openFds = (): number => readdirSync('/proc/self/fd').length;

const job = (ordinal: number): Job =>
  ({
    ordinal,
    input: {
      file: `in/f${ordinal}.pdf`,
      path: `/in/f${ordinal}.pdf`,
      realPath: `/in/f${ordinal}.pdf`,
      size: 1,
      explicit: false,
    },
    sha256: 'b'.repeat(64),
    mimeType: 'application/pdf',
    key: `key-${ordinal}`,
    decision: { route: 'inline', why: 'small' },
    action: 'submit',
  }) as Job;

const entry = (i: number, note = ''): ReportEntry => ({
  ...completedRecord({ file: `in/f${i}${note}.pdf`, document_id: `doc_${i}`, route: 'inline' }, 1, { total: i }),
  outcome: 'completed',
  sha256: i.toString(16).padStart(64, '0'),
});

describe("the run's temporary database", () => {
  it('holds the plan and the records in one file that is in no folder, freed with the last of them', () => {
    const dir = tempDir('extract-scratch-');
    const before = openFds();
    const scratch = Scratch.open(dir);
    expect(scratch).toBeDefined();
    const jobs = PlanStore.open(scratch);
    const records = RecordSpool.open(scratch);
    expect(records).toBeDefined();
    // One descriptor for both, and nothing in the temp directory a crash could leave behind.
    expect(openFds() - before).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
    const n = 5000;
    for (let i = 0; i < n; i++) {
      jobs.add(job(i));
      records!.put(i, entry(i));
    }
    // Written again after their first block went to disk: the last one is read back.
    for (const i of [0, n - 1]) records!.put(i, entry(i, '-moved'));
    for (let i = 0; i < n; i++) {
      expect(jobs.get(i).key).toBe(`key-${i}`);
      expect(records!.get(i)).toEqual(entry(i, i === 0 || i === n - 1 ? '-moved' : ''));
    }
    // The plan goes at the end of the run; the records stay readable until the summary is released.
    jobs.close();
    expect(openFds() - before).toBe(1);
    expect(records!.get(7)).toEqual(entry(7));
    records!.close();
    expect(openFds()).toBe(before);
    expect(() => records!.get(7)).toThrow(/read after the run released them/);
  });

  it('where no database can be made (no writable temp directory), none is opened and the caller keeps its lines in memory', () => {
    expect(Scratch.open('/nonexistent/extract-test')).toBeUndefined();
    const jobs = PlanStore.open(undefined);
    jobs.add(job(0));
    expect(jobs.get(0).key).toBe('key-0');
    jobs.close();
  });
});
