import { describe, expect, it } from 'vitest';
import { annotations, stepSummary } from '../../src/batch/finish/github.ts';
import { createRecords } from '../../src/batch/records.ts';
import { tallySummary, type ReportEntry } from '../../src/batch/summary.ts';
import { completedRecord } from '../../src/outputs/record.ts';
import { runnerCommands } from '../helpers/runner-commands.ts';

/**
 * Under GitHub Actions the annotations and the job summary list at most a few rows: they read
 * the run's records an entry at a time, never the summary's whole lists (a batch of 100,000
 * would hold every record again).
 */

function entry(i: number): ReportEntry {
  if (i % 3 === 0)
    return {
      file: `in/f${i}.pdf`,
      document_id: `doc_${i}`,
      status: 'error',
      page_count: 1,
      route: 'inline',
      error: `failed ${i}`,
      needs_review: false,
      results: null,
      outcome: 'failed',
      sha256: null,
    };
  const record = completedRecord({ file: `in/f${i}.pdf`, document_id: `doc_${i}`, route: 'inline' }, 1, {
    total: i,
    email: i % 3 === 1 ? null : 'a@b.c',
  });
  return { ...record, outcome: 'completed', sha256: null };
}

describe('GitHub Actions output of a large batch', () => {
  it('counts every failure and review, lists the first ones, and never builds the whole lists', () => {
    const records = createRecords(undefined, undefined);
    const n = 900;
    const keys = Array.from({ length: n }, (_, i) => `k${i}`);
    for (let i = 0; i < n; i++) records.emit(keys[i]!, entry(i));
    const summary = tallySummary(records.inOrder(keys), {
      stoppedBy: null,
      message: null,
      elapsedMs: 1,
      dryRun: false,
      charges: { reserved: 600, refunded: 0, unknown: 0, recognised: 12 },
    });
    const read = { documents: 0, needs_review: 0 };
    for (const key of ['documents', 'needs_review'] as const)
      Object.defineProperty(summary, key, {
        get() {
          read[key]++;
          return [];
        },
      });
    const page = stepSummary(summary);
    expect(page).toContain('| with null fields to review | 300 |');
    expect(page).toContain('| pages charged | 600 |\n| pages recognised (no charge) | 12 |');
    expect(page).toContain('| … and 200 more (see --report) | |');
    expect(page).toContain('| … and 200 more (see --review) | |');
    expect(page.match(/^\| in\/f\d+\.pdf \| failed \d+ \|$/gm)).toHaveLength(100);
    const lines = annotations(summary);
    expect(lines.filter((l) => l.startsWith('::error'))).toHaveLength(50);
    expect(lines.filter((l) => l.startsWith('::warning'))).toHaveLength(50);
    expect(lines[0]).toBe('::error file=in/f0.pdf,title=extract::failed 0');
    expect(read).toEqual({ documents: 0, needs_review: 0 });
  });
});

describe('GitHub Actions output of hostile names and texts', () => {
  it('keeps the step summary under 1 MiB and each annotation one small command, whatever names and reasons hold', () => {
    const records = createRecords(undefined, undefined);
    const n = 300;
    const keys = Array.from({ length: n }, (_, i) => `k${i}`);
    const name = (i: number): string => `in/${'n'.repeat(3000)}\n::add-mask::${i}\r##[set-output name=ok;]1.pdf`;
    for (let i = 0; i < n; i++) {
      const base = entry(i);
      records.emit(keys[i]!, {
        ...base,
        file: name(i),
        ...(base.outcome === 'failed' ? { error: `boom\n::stop-commands::tok${'x'.repeat(64 * 1024)}` } : {}),
      });
    }
    const summary = tallySummary(records.inOrder(keys), {
      stoppedBy: null,
      message: null,
      elapsedMs: 1,
      dryRun: false,
      charges: { reserved: 300, refunded: 0, unknown: 0, recognised: 0 },
    });
    const page = stepSummary(summary);
    expect(Buffer.byteLength(page)).toBeLessThan(1024 * 1024);
    const lines = annotations(summary);
    for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThan(16 * 1024);
    const commands = runnerCommands(lines.join('\n'));
    expect(commands).toHaveLength(lines.length);
    expect(new Set(commands.map((c) => c.name))).toEqual(new Set(['error', 'warning']));
  });
});

describe('GitHub Actions annotations of a part named by an archive', () => {
  it('shows the file inert: no escape sequence, no control character, no ##[ command in the file property', () => {
    const records = createRecords(undefined, undefined);
    const keys = ['k0', 'k1'];
    // A zip member's name is the archive author's: `inbox.zip!…` with an ANSI colour and a runner command.
    const file = 'in/inbox.zip!\u001b[31mred\u0007##[set-output name=ok;]1.pdf';
    records.emit('k0', { ...entry(0), file });
    records.emit('k1', { ...entry(1), file });
    const summary = tallySummary(records.inOrder(keys), {
      stoppedBy: null,
      message: null,
      elapsedMs: 1,
      dryRun: false,
      charges: { reserved: 2, refunded: 0, unknown: 0, recognised: 0 },
    });
    const lines = annotations(summary);
    expect(lines.map((l) => l.slice(0, 9))).toEqual(['::error f', '::warning']);
    for (const line of lines) {
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(line).not.toContain('##[');
      expect(line).toContain('red');
    }
  });
});
