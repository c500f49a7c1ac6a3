import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { foreignTargets, soleIdentity } from '../../src/journal/identity.ts';
import { replayJournal } from '../../src/journal/journal-read.ts';
import { replayer, stateKey, type JournalFact, type JournalView, type KnownState } from '../../src/journal/journal.ts';
import { compactJournal } from '../../src/journal/state/compact.ts';
import { openState, type StateJournal, type StateSpec } from '../../src/journal/state/index.ts';
import { openSqliteWriter } from '../../src/journal/state/sqlite.ts';
import pg from 'pg';
import { tempDir } from '../helpers/cli.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { seededRandom } from '../../src/emulator/faults.ts';

/**
 * A journal that knows many documents opens without a replay: what a run looks up
 * through the journal's index (SQLite's extract_documents, the JSONL journal's sidecar) is what
 * a replay of every fact says, document by document. The facts are made here by a generator
 * (about 10^4 of them), never stored; how long a large journal takes to open is the bench's
 * (row 11, up to 10^6 documents). The size is what the lookups' paths need: more documents known
 * than twice a read-ahead of more than one chunk (1,000 keys a query), so that a batch of 1,500
 * is read by key in two queries rather than by one pass over every row. At 40,000 documents the
 * file cost 12 s of CPU, and the by-key read ahead was tried with 100 keys: one query.
 */

const DOCUMENTS = 4_000;
/** More than one query's worth of keys (1,000 a query), and fewer than half the journal's documents. */
const BY_KEY = 1_500;
const TARGETS = ['ta', 'tb', 'tc'];

/** Every kind of history a document can have, about 2.5 facts a document, in time order. */
function* syntheticFacts(documents: number, seed = 26): Generator<JournalFact> {
  const next = seededRandom(seed);
  let clock = Date.parse('2026-01-01T00:00:00.000Z');
  const at = () => new Date(clock++).toISOString();
  yield { fact: 'journal', at: at(), version: 2 };
  yield { fact: 'parser', at: at(), target: 'tb', parser: 'ta' };
  for (let i = 0; i < documents; i++) {
    const target = TARGETS[i % TARGETS.length]!;
    const common = () => ({ at: at(), sha256: `sha${i}`, target, file: `folder/f${i % 997}-${i}.pdf` });
    const kind = next();
    yield {
      fact: 'sending',
      ...common(),
      route: 'inline',
      request: { idempotency_key: `k${i}`, file_name: `f${i}.pdf`, file_type: 'application/pdf' },
    };
    if (kind < 0.55) {
      yield {
        fact: 'completed',
        ...common(),
        route: 'inline',
        document_id: `d${i}`,
        page_count: 1 + (i % 3),
        results: { total: i, vendor: i % 2 ? `V${i}` : null, lines: [{ n: i }] },
      };
      // Some are sent again (--fresh) and refused: the unsent restores the completion.
      if (next() < 0.1) {
        yield { fact: 'sending', ...common(), route: 'inline' };
        yield { fact: 'unsent', ...common(), route: 'inline' };
      }
    } else if (kind < 0.7) yield { fact: 'submitted', ...common(), route: 'upload', document_id: `d${i}` };
    else if (kind < 0.8)
      yield {
        fact: 'failed',
        ...common(),
        route: 'inline',
        document_id: null,
        reason: 'down',
        retryable: true,
        charge: 'none',
      };
    else if (kind < 0.88) yield { fact: 'unsent', ...common(), route: 'inline' };
    else if (kind < 0.95)
      yield {
        fact: 'failed',
        ...common(),
        route: 'inline',
        document_id: `d${i}`,
        reason: 'bad',
        retryable: false,
        charge: 'refunded',
      };
    // else: left in flight (a crash): `sending` is the latest.
  }
}

function journalText(documents: number): string {
  const lines: string[] = [];
  for (const fact of syntheticFacts(documents)) lines.push(JSON.stringify(fact));
  return `${lines.join('\n')}\n`;
}

async function openAt(spec: StateSpec, readOnly = false): Promise<StateJournal> {
  return openState(spec, { readOnly, leaseMs: 30_000, log: () => {} });
}

/** Every document of the replay, and some it does not know, answered the same through the view. */
function expectSameAnswers(view: JournalView, known: Map<string, KnownState>, targets = TARGETS): void {
  let compared = 0;
  // Documents read ahead and looked up one by one: the same answers.
  const keys = [...known.keys()];
  // Half: one pass over the journal's rows; BY_KEY of the other half: read by key, a thousand a query.
  expect(keys.length).toBeGreaterThan(2 * BY_KEY);
  view.known.prefetch?.([...keys.slice(0, keys.length / 2), 'ta:absent-ahead']);
  view.known.prefetch?.([...keys.slice(keys.length - BY_KEY), 'tb:absent-ahead']);
  expect(view.known.get('tb:absent-ahead')).toBeUndefined();
  expect(view.known.get('ta:absent-ahead')).toBeUndefined();
  for (const [key, fact] of known) {
    const got = view.known.get(key);
    // Results come back as stored text (a proxy): compared as JSON.
    if (JSON.stringify(got) !== JSON.stringify(fact)) expect(got, key).toEqual(fact);
    compared++;
  }
  expect(compared).toBe(known.size);
  for (let i = 0; i < 1000; i++) expect(view.known.get(stateKey(`absent${i}`, 'ta'))).toBeUndefined();
  expect(new Set(view.known.targets())).toEqual(new Set(targets));
  expect(foreignTargets(view.known, soleIdentity('ta'))).toEqual(new Set(targets.filter((t) => t !== 'ta')));
  for (const fact of [...known.values()].slice(0, 200)) expect(view.known.names(fact.file)).toBe(true);
  expect(view.known.names('folder/never.pdf')).toBe(false);
}

describe('a journal of many documents opens without a replay and answers as a replay does', () => {
  it('JSON Lines: the index built once, then opened and looked up per document; facts after it replayed on top', async () => {
    const dir = tempDir('journal-scale-');
    const path = join(dir, 'journal.jsonl');
    const text = journalText(DOCUMENTS);
    writeFileSync(path, text);
    const replay = replayJournal(text);
    expect(replay.known.size).toBeGreaterThan(DOCUMENTS * 0.8);

    // The first run replays the journal whole and leaves the index.
    const first = await openAt({ kind: 'file', path });
    expectSameAnswers(await first.view(), replay.known);
    await first.close();

    // The next one looks up through the index.
    const second = await openAt({ kind: 'file', path }, true);
    const view = await second.view();
    expectSameAnswers(view, replay.known);
    expect(view.parsers).toEqual(replay.parsers);
    await second.close();

    // Facts written after the index (a crash before it was saved) are on top of it.
    const later: JournalFact[] = [
      {
        fact: 'sending',
        at: '2027-01-01T00:00:00.000Z',
        sha256: 'sha0',
        target: 'ta',
        file: 'again.pdf',
        route: 'inline',
      },
      {
        fact: 'unsent',
        at: '2027-01-01T00:00:01.000Z',
        sha256: 'sha0',
        target: 'ta',
        file: 'again.pdf',
        route: 'inline',
      },
      {
        fact: 'sending',
        at: '2027-01-01T00:00:02.000Z',
        sha256: 'new',
        target: 'td',
        file: 'new.pdf',
        route: 'inline',
      },
    ];
    appendFileSync(path, later.map((f) => `${JSON.stringify(f)}\n`).join(''));
    const all = replayJournal(`${text}${later.map((f) => `${JSON.stringify(f)}\n`).join('')}`);
    const third = await openAt({ kind: 'file', path }, true);
    const after = await third.view();
    expect(after.known.get(stateKey('new', 'td'))?.fact).toBe('sending');
    expect(JSON.stringify(after.known.get(stateKey('sha0', 'ta')))).toBe(
      JSON.stringify(all.known.get(stateKey('sha0', 'ta'))),
    );
    expect(new Set(after.known.targets())).toEqual(new Set([...TARGETS, 'td']));
    expect(after.known.names('new.pdf')).toBe(true);
    await third.close();

    // Compacted: fewer facts, the same answers (in-flight sends keep what a refusal restores).
    const done = await compactJournal({ kind: 'file', path }, { log: () => {} });
    expect(done.factsAfter).toBeLessThan(done.factsBefore);
    expect(replayJournal(readFileSync(path, 'utf8')).known).toEqual(all.known);
    const fourth = await openAt({ kind: 'file', path }, true);
    expectSameAnswers(await fourth.view(), all.known, [...TARGETS, 'td']);
    await fourth.close();
  }, 120_000);

  it('SQLite: the view looks documents up in extract_documents, agreeing with a replay of every fact', async () => {
    const dir = tempDir('journal-scale-');
    const path = join(dir, 'journal.sqlite');
    const facts = [...syntheticFacts(DOCUMENTS)];
    const replay = replayJournal(`${facts.map((f) => JSON.stringify(f)).join('\n')}\n`);
    const writer = await openSqliteWriter(path, { readOnly: false, leaseMs: 30_000, log: () => {} });
    await writer.importFacts(facts, '/synthetic');
    await writer.close();

    const reader = await openAt({ kind: 'sqlite', path });
    const view = await reader.view();
    expectSameAnswers(view, replay.known);
    expect(view.parsers).toEqual(replay.parsers);
    await reader.close();

    const done = await compactJournal({ kind: 'sqlite', path }, { log: () => {} });
    expect(done.factsAfter).toBeLessThan(done.factsBefore);
    const compacted = await openAt({ kind: 'sqlite', path });
    expectSameAnswers(await compacted.view(), replay.known);
    // The facts left replay to the same documents.
    const history = await compacted.history();
    const again = replayer();
    for (const { fact } of history.facts) again.apply(fact);
    expect(JSON.stringify([...again.known].sort())).toBe(JSON.stringify([...replay.known].sort()));
    await compacted.close();
  }, 120_000);

  it('PostgreSQL: a worker reads the documents of its batch by key (a thousand a query), as a replay of every fact says', async () => {
    const server = await startPostgres();
    try {
      const url = await server.database();
      // The tables as a worker makes them, then the facts as workers write them (in one statement, not 10^5 round trips).
      const first = await openAt({ kind: 'postgres', url });
      await first.close();
      const facts = [...syntheticFacts(DOCUMENTS)];
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(
          `INSERT INTO extract_facts (key, fact, body, worker)
           SELECT CASE WHEN f->>'sha256' IS NULL THEN NULL ELSE (f->>'target') || ':' || (f->>'sha256') END, f->>'fact', f, 'w'
             FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(f, n) ORDER BY n`,
          [JSON.stringify(facts)],
        );
      } finally {
        await client.end();
      }
      const replay = replayJournal(`${facts.map((f) => JSON.stringify(f)).join('\n')}\n`);
      const reader = await openAt({ kind: 'postgres', url });
      const view = await reader.view();
      expect(view.parsers).toEqual(replay.parsers);
      expect(new Set(view.known.targets())).toEqual(new Set(TARGETS));
      // Every document read ahead, and some no fact names.
      const keys = [...replay.known.keys()];
      await view.known.prefetch!([...keys, 'ta:absent']);
      expect(view.known.get('ta:absent')).toBeUndefined();
      for (const [key, fact] of replay.known) expect(view.known.get(key), key).toEqual(fact);
      await reader.close();
    } finally {
      server.stop();
    }
  }, 120_000);
});
