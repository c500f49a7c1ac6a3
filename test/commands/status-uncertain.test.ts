import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import { describe, expect } from 'vitest';
import { runStatus, statusLines, statusOf, type StatusView } from '../../src/commands/status.ts';
import type { JournalFact, WriteBytes } from '../../src/journal/journal.ts';
import { batchOptions, invoiceDir, run } from '../batch/harness.ts';
import { KEY } from '../helpers/emulator.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Uncertain documents (sent, outcome unknown: they may have been charged) are listed by
 * `extract status --uncertain`, each with the file, its document_id and pages when known, and
 * the real reason it is uncertain, as far as the journal (and its rescue file) knows it.
 */

async function status(cwd: string, json = true): Promise<{ view: StatusView; text: string }> {
  let text = '';
  const stdout = new Writable({
    write: (c, _e, cb) => {
      text += String(c);
      cb();
    },
  });
  const view = await runStatus(
    { state: '.extract-state.jsonl', json, leaseMs: 60_000, uncertain: true },
    { cwd, stdout, log: () => {} },
  );
  return { view, text };
}

async function addFault(url: string, rule: unknown): Promise<void> {
  const res = await fetch(`${url}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  expect(res.status).toBe(200);
}

describe('extract status --uncertain', () => {
  it("a full disk: the documents in flight are listed with their real cause, the rescue file's document_id and pages", async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(4, 2);
    // The journal's disk fills once the four `sending` facts are on it: the first result finds it full.
    let full = false;
    const write: WriteBytes = (fd, bytes, offset, length) => {
      full ||= bytes.includes('"fact":"completed"');
      if (full) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return writeSync(fd, bytes, offset, length);
    };
    const first = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'inline', concurrency: 8 }), {
      writeJournal: write,
    });
    expect(first.summary.stopped_by).toBe('journal');
    const { view, text } = await status(cwd);
    expect(view.uncertain).toBe(4);
    expect(view.uncertain_documents).toHaveLength(4);
    for (const u of view.uncertain_documents ?? []) {
      expect(u).toMatchObject({ state: 'in_flight', cause: 'journal_unwritable', pages: 2 });
      expect(u.document_id).toMatch(/^doc_/);
    }
    expect(JSON.parse(text)).toMatchObject({ uncertain: 4 });
    const lines = statusLines(view).join('\n');
    expect(lines).toMatch(/uncertain \(4\):/);
    expect(lines).toMatch(
      /the journal could not be written .*: completed, its outcome waits in .*\.extract-state\.jsonl\.rescue\//,
    );
    expect(lines).not.toMatch(/in flight at a crash/);
  });

  it("an answer lost (a reset after the work) or a proxy's 502: listed as uncertain with that cause", async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(2, 1);
    await addFault(server.url, {
      operation: 'extract-inline',
      probability: 1,
      effect: { type: 'reset', when: 'after' },
    });
    await run(cwd, ['in/doc-00.pdf'], batchOptions(server.url, KEY, { route: 'inline' }));
    await fetch(`${server.url}/_emulator/faults`, { method: 'DELETE' });
    await addFault(server.url, {
      operation: 'extract-inline',
      probability: 1,
      effect: { type: 'status', status: 502 },
    });
    await run(cwd, ['in/doc-01.pdf'], batchOptions(server.url, KEY, { route: 'inline' }));
    const { view } = await status(cwd);
    const causes = new Map((view.uncertain_documents ?? []).map((u) => [u.file, [u.state, u.cause]]));
    expect(causes).toEqual(
      new Map([
        ['in/doc-00.pdf', ['failed', 'connection']],
        ['in/doc-01.pdf', ['failed', 'gateway']],
      ]),
    );
    expect(statusLines(view).join('\n')).toMatch(/a proxy answered for the service/);
  });

  it('a `sending` fact nothing followed: a live worker has it in flight; a gone one ended before the answer; a finished one could not write', () => {
    const c = (sha256: string) => ({ at: '2026-01-01T00:00:00.000Z', sha256, target: 't', file: `${sha256}.pdf` });
    const facts: Array<{ fact: JournalFact; worker: string | null }> = [
      { worker: 'a', fact: { fact: 'sending', ...c('d1'), route: 'inline' } },
      { worker: 'b', fact: { fact: 'sending', ...c('d2'), route: 'inline' } },
      { worker: 'c', fact: { fact: 'sending', ...c('d3'), route: 'inline' } },
    ];
    const worker = (id: string, alive: boolean, finished: string | null) => ({
      id,
      host: 'h',
      pid: 1,
      started: 's',
      seen: 's',
      finished,
      alive,
      holding: 0,
    });
    const view = statusOf(
      'j.sqlite',
      { facts, workers: [worker('a', true, null), worker('b', false, null), worker('c', false, 'f')], skipped: 0 },
      { uncertain: true },
    );
    expect(view.uncertain_documents?.map((u) => [u.file, u.cause])).toEqual([
      ['d1.pdf', 'in_flight'],
      ['d2.pdf', 'run_ended'],
      ['d3.pdf', 'journal_unwritable'],
    ]);
    // A JSONL journal names no worker: its lock's live holder has out what was sent since it began.
    const file = (liveSince: string | undefined) =>
      statusOf(
        'j.jsonl',
        { facts: [{ worker: null, fact: { fact: 'sending', ...c('d4'), route: 'inline' } }], workers: [], skipped: 0 },
        { uncertain: true },
        { liveSince },
      ).uncertain_documents?.map((u) => u.cause);
    expect(file('2025-12-31T23:00:00.000Z')).toEqual(['in_flight']);
    expect(file('2026-01-01T01:00:00.000Z')).toEqual(['run_ended']);
    expect(file(undefined)).toEqual(['run_ended']);
  });
});
