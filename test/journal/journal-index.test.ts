import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replayJournal } from '../../src/journal/journal-read.ts';
import type { JournalFact } from '../../src/journal/journal.ts';
import { openFileState } from '../../src/journal/state/file.ts';
import { indexPathFor, loadIndexed } from '../../src/journal/state/journal-index.ts';
import { storedText } from '../../src/outputs/stored-results.ts';

let dir: string;
let journal: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'journal-index-'));
  journal = join(dir, 'state.jsonl');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const at = '2026-01-01T00:00:00.000Z';
/** Every kind of fact over `n` documents, in the order a run writes them, with some sends refused (unsent). */
function facts(n: number, from = 0): JournalFact[] {
  const out: JournalFact[] = [];
  for (let i = from; i < from + n; i++) {
    const common = { at, sha256: `sha${i}`, target: 't', file: `f${i}.pdf` };
    out.push({ fact: 'sending', ...common, route: 'inline' });
    if (i % 5 === 0) out.push({ fact: 'unsent', ...common, route: 'inline' });
    else if (i % 5 === 1)
      out.push({ fact: 'failed', ...common, route: 'inline', document_id: null, reason: 'x', retryable: false });
    else if (i % 5 === 2) out.push({ fact: 'submitted', ...common, route: 'upload', document_id: `d${i}` });
    else if (i % 5 === 3) {
      /* left in flight: the replay remembers what it knew before */
    } else
      out.push({
        fact: 'completed',
        ...common,
        route: 'inline',
        document_id: `d${i}`,
        page_count: 1,
        results: { total: i, vendor: null },
      });
  }
  return out;
}
const lines = (list: JournalFact[]): string => list.map((f) => `${JSON.stringify(f)}\n`).join('');
const sorted = <T>(m: Map<string, T>): Array<[string, T]> => [...m].sort(([a], [b]) => (a < b ? -1 : 1));

/** The index's `before` entries: what an unsent fact would restore, per document. */
function beforeRows(): Array<[string, { fact: string }]> {
  const db = new DatabaseSync(indexPathFor(journal), { readOnly: true });
  try {
    return db
      .prepare('SELECT key, state FROM before ORDER BY key')
      .all()
      .map((row) => [String(row.key), JSON.parse(String(row.state)) as { fact: string }]);
  } finally {
    db.close();
  }
}

async function runWith(list: JournalFact[]): Promise<void> {
  const state = await openFileState(journal, { readOnly: false, leaseMs: 30_000, log: () => {} });
  for (const f of list) await state.append(f);
  await state.close();
}

describe('journal index', () => {
  it('a run leaves an index from which the next one replays nothing, knowing what a full replay knows', async () => {
    await runWith(facts(40));
    const indexed = await loadIndexed(journal);
    expect(indexed?.replayedAfter).toBe(0);
    expect(sorted(indexed!.state.known)).toEqual(sorted(replayJournal(readFileSync(journal, 'utf8')).known));
    // Completed results come back as their stored text, which the JSON Lines output copies.
    const completed = [...indexed!.state.known.values()].filter((f) => f.fact === 'completed');
    expect(completed.length).toBe(8);
    for (const f of completed) expect(storedText(f.results)).toBe(JSON.stringify(f.results));
  });

  it('first sends leave nothing to restore: the index keeps no entry per document for them', async () => {
    await runWith(facts(40));
    expect(beforeRows()).toEqual([]);
    // A resend of a known document remembers what was known, so that a refusal (unsent) restores it.
    const resend = facts(5).filter((f) => f.fact === 'sending' && f.sha256 === 'sha4');
    await runWith(resend);
    const again = { before: beforeRows() };
    expect(again.before.map(([key, fact]) => [key, fact.fact])).toEqual([['t:sha4', 'completed']]);
  });

  it('completed facts round-trip whatever their text: tabs and newlines in a name, no page count, unicode', async () => {
    const completed = (i: number, file: string, page_count: number | null): JournalFact => ({
      fact: 'completed',
      at,
      sha256: `sha${i}`,
      target: 't',
      file,
      route: i % 2 ? 'upload' : 'inline->upload',
      document_id: `d ${i} é`,
      page_count,
      results: { total: i, note: 'tab\there', nested: { a: null, b: 'x' } },
    });
    const list = [
      completed(1, 'plain.pdf', 3),
      completed(2, 'tab\tname.pdf', 1),
      completed(3, 'new\nline.pdf', null),
      completed(4, 'ünïcödé 📄.pdf', 0),
    ];
    await runWith(list);
    const indexed = await loadIndexed(journal);
    expect(indexed?.replayedAfter).toBe(0);
    expect(sorted(indexed!.state.known)).toEqual(sorted(replayJournal(readFileSync(journal, 'utf8')).known));
    for (const f of indexed!.state.known.values()) expect(f.fact === 'completed' && storedText(f.results)).toBeTruthy();
  });

  it('facts written after the index (a crash before it was saved) are replayed on top of it', async () => {
    await runWith(facts(20));
    // A later run killed before its close: its facts are in the journal, not in the index.
    appendFileSync(journal, lines(facts(10, 15)));
    const indexed = await loadIndexed(journal);
    expect(indexed?.replayedAfter).toBeGreaterThan(0);
    expect(sorted(indexed!.state.known)).toEqual(sorted(replayJournal(readFileSync(journal, 'utf8')).known));
    // "unsent" after the index restores what the index knew before that send.
    const s = await openFileState(journal, { readOnly: true, leaseMs: 30_000, log: () => {} });
    expect(sorted((await s.replay()).known)).toEqual(sorted(replayJournal(readFileSync(journal, 'utf8')).known));
    await s.close();
  });

  it('a journal cut short stops the run (it lost facts); replaced or edited before the offset: the index is ignored and the journal replayed', async () => {
    await runWith(facts(20));
    const text = readFileSync(journal, 'utf8');
    writeFileSync(journal, text.slice(0, text.length - 100));
    await expect(runWith([])).rejects.toMatchObject({ code: 'state', message: expect.stringMatching(/is damaged/) });

    // Accepted as it is (the index removed, as the message says): a run replays it and saves a new index.
    rmSync(indexPathFor(journal));
    await runWith([]);
    expect((await loadIndexed(journal))?.replayedAfter).toBe(0);
    const same = readFileSync(journal, 'utf8');
    // Same length, one fact changed near the end: the tail digest tells.
    const last = same.lastIndexOf('"at":"2026');
    expect(last).toBeGreaterThan(0);
    writeFileSync(journal, `${same.slice(0, last)}"at":"2027${same.slice(last + 10)}`);
    expect(await loadIndexed(journal)).toBeUndefined();

    // Another file at the same path (a new inode).
    const copy = readFileSync(journal);
    rmSync(journal);
    writeFileSync(journal, copy);
    expect(await loadIndexed(journal)).toBeUndefined();
  });

  it('a damaged index is ignored; the run replays the journal and writes a good one', async () => {
    await runWith(facts(20));
    const index = readFileSync(indexPathFor(journal), 'utf8');
    writeFileSync(indexPathFor(journal), index.replace('"sha3"', '"sha9"'));
    expect(await loadIndexed(journal)).toBeUndefined();
    const s = await openFileState(journal, { readOnly: false, leaseMs: 30_000, log: () => {} });
    expect(sorted((await s.replay()).known)).toEqual(sorted(replayJournal(readFileSync(journal, 'utf8')).known));
    await s.close();
    expect((await loadIndexed(journal))?.replayedAfter).toBe(0);
  });
});
