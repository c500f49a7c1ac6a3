import { describe, expect, it } from 'vitest';
import type { JournalFact } from '../../src/journal/journal.ts';
import { statusLines, statusOf } from '../../src/commands/status.ts';
import { runnerCommands } from '../helpers/runner-commands.ts';

const c = (sha256: string, at = '2026-01-01T00:00:00.000Z') => ({ at, sha256, target: 't', file: `${sha256}.pdf` });

describe('status', () => {
  it('counts documents by their latest fact, pages charged, per worker, and the oldest still processing', () => {
    const facts: Array<{ fact: JournalFact; worker: string | null }> = [
      { worker: 'a', fact: { fact: 'submitted', ...c('d1'), route: 'upload', document_id: 'doc_1' } },
      {
        worker: 'b',
        fact: { fact: 'completed', ...c('d1'), route: 'upload', document_id: 'doc_1', page_count: 3, results: {} },
      }, // taken over by b
      {
        worker: 'a',
        fact: { fact: 'completed', ...c('d2'), route: 'inline', document_id: 'doc_2', page_count: null, results: {} },
      },
      {
        worker: 'b',
        fact: { fact: 'failed', ...c('d3'), route: 'inline', document_id: null, reason: 'x', retryable: false },
      },
      {
        worker: 'a',
        fact: { fact: 'submitted', ...c('d4', '2026-01-01T00:00:05.000Z'), route: 'upload', document_id: 'doc_4' },
      },
      {
        worker: 'b',
        fact: { fact: 'submitted', ...c('d5', '2026-01-01T00:00:02.000Z'), route: 'upload', document_id: 'doc_5' },
      },
      { worker: 'a', fact: { fact: 'sending', ...c('d6'), route: 'inline' } },
      { worker: 'a', fact: { fact: 'sending', ...c('d7'), route: 'inline' } },
      { worker: 'a', fact: { fact: 'unsent', ...c('d7'), route: 'inline' } },
    ];
    const view = statusOf('postgres://***@h/db', {
      facts,
      workers: [{ id: 'a', host: 'h1', pid: 1, started: 's', seen: 's', finished: null, alive: false, holding: 0 }],
      skipped: 0,
    });
    expect(view).toMatchObject({
      documents: 6,
      completed: 2,
      failed: 1,
      processing: 2,
      uncertain: 1,
      pages_charged: 3,
    });
    expect(view.oldest_pending).toEqual({ file: 'd5.pdf', document_id: 'doc_5', since: '2026-01-01T00:00:02.000Z' });
    expect(view.workers.map((w) => [w.id, w.completed, w.failed, w.pages])).toEqual([
      ['a', 1, 0, 0], // a null page count is not a zero charge of a known page: it adds nothing
      ['b', 1, 1, 3],
    ]);
    const text = statusLines(view).join('\n');
    expect(text).toMatch(
      /6 documents: 2 completed \(\d+ with null fields to review\), 1 failed, 2 processing, 1 uncertain/,
    );
    expect(text).toContain('oldest still processing: d5.pdf (doc_5)');
    expect(text).toMatch(/ {2}a {2}1 completed, 0 failed, 0 pages; gone/);
  });

  it('status: failures that fail again are counted as set aside; one that may have been charged or may pass is not', () => {
    const failed = (sha: string, extra: Partial<Extract<JournalFact, { fact: 'failed' }>>): JournalFact => ({
      fact: 'failed',
      ...c(sha),
      route: 'upload',
      document_id: null,
      reason: 'x',
      retryable: true,
      ...extra,
    });
    const facts = [
      failed('judged', { document_id: 'doc_1', charge: 'refunded', retryable: false }),
      failed('refused', { retryable: false, charge: 'none' }),
      failed('down', { charge: 'none' }),
      failed('lost', { charge: 'uncertain' }),
    ].map((fact) => ({ fact, worker: null }));
    const view = statusOf('j', { facts, workers: [], skipped: 0 });
    expect(view).toMatchObject({ failed: 4, set_aside: 2 });
    expect(statusLines(view).join('\n')).toContain('2 of the failed fail the same way again');
  });

  it('lists a hostile name and a huge reason as one short line each', () => {
    const file = 'in/a\n::add-mask::x\r##[set-output name=ok;]1.pdf';
    const reason = `boom\n::stop-commands::tok${'x'.repeat(3 * 1024 * 1024)}`;
    const view = statusOf(
      'j.sqlite',
      {
        facts: [
          {
            worker: null,
            fact: { fact: 'failed', ...c('d1'), file, route: 'inline', document_id: 'doc_1', reason, retryable: false },
          },
        ],
        workers: [],
        skipped: 0,
      },
      { failed: true },
    );
    const lines = statusLines(view);
    const line = lines.find((l) => l.includes('doc_1'));
    expect(line).toContain('in/a\\x0a::add-mask::x\\x0d##\\x5bset-output');
    expect(Buffer.byteLength(line ?? '')).toBeLessThan(2 * 1024);
    expect(runnerCommands(lines.join('\n'))).toEqual([]);
  });
});
