import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stateKey, type JournalFact } from '../../src/journal/journal.ts';
import { openRunJournal, type RunJournalOptions } from '../../src/journal/run-journal.ts';
import type { StateJournal } from '../../src/journal/state/index.ts';
import { LEGACY_STATE, userJournalPath } from '../../src/journal/state/user-journal.ts';
import { tempDir } from '../helpers/cli.ts';

/** journal/run-journal.ts: a batch run's journal, opened in one call from the journal's options. */

const BASE = 'http://127.0.0.1:9/';
const COMPLETED: JournalFact = {
  fact: 'completed',
  at: '2026-01-01T00:00:01.000Z',
  sha256: 'd1',
  target: 't1',
  file: 'd1.pdf',
  route: 'inline',
  document_id: 'doc_1',
  page_count: 1,
  results: { total: 1 },
};

function options(over: Partial<RunJournalOptions> = {}): RunJournalOptions {
  return { state: undefined, baseUrl: BASE, dryRun: false, fresh: false, lease: 30_000, stateWait: 1_000, ...over };
}

/** A folder to run in, the user's state home inside it, and the deps a run gives. */
function place() {
  const cwd = tempDir('extract-run-journal-');
  const env = { XDG_STATE_HOME: join(cwd, '.state') };
  const lines: string[] = [];
  const opened: StateJournal[] = [];
  const deps = {
    cwd,
    env,
    log: (_level: string, line: string) => void lines.push(line),
    opened: (journal: StateJournal) => void opened.push(journal),
    writeFailed: () => {},
  };
  return { cwd, env, lines, opened, deps, user: userJournalPath(env, BASE) };
}

describe('the run journal', () => {
  it("a dry run reads an earlier version's journal behind the user's, and makes no folder, journal or import", async () => {
    const p = place();
    writeFileSync(join(p.cwd, LEGACY_STATE), `${JSON.stringify(COMPLETED)}\n`);
    const run = await openRunJournal(options({ dryRun: true }), p.deps);
    try {
      expect(run.view.known.get(stateKey('d1', 't1'))).toMatchObject({ fact: 'completed', document_id: 'doc_1' });
      expect(run.view.known.names('d1.pdf')).toBe(true);
      expect(existsSync(join(p.cwd, '.state'))).toBe(false);
      expect(existsSync(join(p.cwd, LEGACY_STATE))).toBe(true);
      expect(p.opened).toEqual([run.journal]);
    } finally {
      await run.journal.close();
    }
  });

  it("a run that writes takes an earlier version's journal into the user's, once, and retires the old file", async () => {
    const p = place();
    writeFileSync(join(p.cwd, LEGACY_STATE), `${JSON.stringify(COMPLETED)}\n`);
    const first = await openRunJournal(options(), p.deps);
    await first.journal.close();
    expect(existsSync(join(p.cwd, `${LEGACY_STATE}.imported`))).toBe(true);
    expect(p.lines.filter((line) => line.startsWith('imported the 1 facts'))).toHaveLength(1);
    const again = await openRunJournal(options(), p.deps);
    try {
      expect(again.view.known.get(stateKey('d1', 't1'))).toMatchObject({ document_id: 'doc_1' });
      expect(p.lines.filter((line) => line.startsWith('imported'))).toHaveLength(1);
    } finally {
      await again.journal.close();
    }
  });

  it('discardMade removes the user journal only when this run made it', async () => {
    const p = place();
    const made = await openRunJournal(options(), p.deps);
    await made.journal.close();
    expect(existsSync(p.user)).toBe(true);
    await made.discardMade();
    expect(existsSync(p.user)).toBe(false);

    const first = await openRunJournal(options(), p.deps);
    await first.journal.close();
    const existing = await openRunJournal(options(), p.deps);
    await existing.journal.close();
    await existing.discardMade();
    expect(existsSync(p.user)).toBe(true);
  });

  it('discardMade keeps a journal another run opened at the same time and wrote to: its facts are not lost', async () => {
    const p = place();
    // Two runs start together on a new machine: both find no journal, so both "made" it.
    const neverAnswered = await openRunJournal(options(), p.deps);
    const answered = await openRunJournal(options(), p.deps);
    await answered.journal.append(COMPLETED);
    await neverAnswered.journal.close();
    await neverAnswered.discardMade();
    await answered.journal.close();
    expect(existsSync(p.user)).toBe(true);
    const later = await openRunJournal(options(), p.deps);
    try {
      expect(later.view.known.get(stateKey('d1', 't1'))).toMatchObject({ document_id: 'doc_1' });
    } finally {
      await later.journal.close();
    }
  });

  it('--fresh with a shared journal is refused before anything is opened', async () => {
    const p = place();
    const refused = openRunJournal(options({ state: 'postgres://u@127.0.0.1:9/db', fresh: true }), p.deps);
    await expect(refused).rejects.toThrow(/--fresh with a shared journal/);
    expect(p.opened).toEqual([]);
  });

  it('--no-state keeps the run in memory; --state names the journal, and nothing is made for the user', async () => {
    const p = place();
    const none = await openRunJournal(options({ state: null }), p.deps);
    expect(none.spec).toBeNull();
    await none.journal.close();
    mkdirSync(join(p.cwd, 'j'));
    const named = await openRunJournal(options({ state: 'j/run.sqlite' }), p.deps);
    await named.journal.close();
    expect(named.spec).toMatchObject({ kind: 'sqlite' });
    expect(existsSync(join(p.cwd, 'j', 'run.sqlite'))).toBe(true);
    await named.discardMade();
    expect(existsSync(join(p.cwd, 'j', 'run.sqlite'))).toBe(true);
    expect(existsSync(join(p.cwd, '.state'))).toBe(false);
  });
});
