import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseJournal, readFact, readJournal, replayJournal } from '../../src/journal/journal-read.ts';
import {
  applyFact,
  asLookup,
  factKey,
  JOURNAL_VERSION,
  type JournalFact,
  type KnownState,
  knownFromMap,
  openJournal,
  replayer,
  stateKey,
  targetsOf,
  versionFact,
} from '../../src/journal/journal.ts';

/** The journal's replay and lookups (journal/journal.ts, journal-read.ts), fact by fact, in-process. */

const common = { at: '2026-01-01T00:00:00.000Z', sha256: 'abc', target: 't1', file: 'a.pdf' };
const line = (f: unknown): string => `${JSON.stringify(f)}\n`;
const completed: KnownState = {
  fact: 'completed',
  ...common,
  route: 'inline',
  document_id: 'doc_1',
  page_count: 2,
  results: {},
};
const submitted: KnownState = { fact: 'submitted', ...common, route: 'upload', document_id: 'doc_1' };
const sending: JournalFact = { fact: 'sending', ...common, route: 'inline' };
const unsent: JournalFact = { fact: 'unsent', ...common, route: 'inline' };
const key = stateKey('abc', 't1');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'replay-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('journal: the replay step', () => {
  it('a key is the target and the content, flat', () => {
    expect(stateKey('abc', 't1')).toBe('t1:abc');
    expect(factKey(completed)).toBe('t1:abc');
    expect(factKey({ fact: 'reset', at: common.at })).toBeUndefined();
    expect(factKey({ fact: 'parser', at: common.at, target: 't1', parser: 't1' })).toBeUndefined();
    expect(factKey(versionFact())).toBeUndefined();
  });

  it('a sending fact remembers what was known before it; unsent puts it back', () => {
    const r = replayer();
    r.apply(completed);
    r.apply(sending);
    expect(r.known.get(key)?.fact).toBe('sending');
    expect(r.before.get(key)).toEqual(completed);
    r.apply(unsent);
    expect(r.known.get(key)).toEqual(completed);
    expect(r.before.has(key)).toBe(false);
  });

  it('a first send keeps no entry of what came before, and unsent forgets the document', () => {
    const r = replayer();
    r.apply(sending);
    expect(r.before.has(key)).toBe(false);
    r.apply(unsent);
    expect(r.known.has(key)).toBe(false);
  });

  it('a second send of a document first sent in this journal: a refused resend leaves the first, uncertain send', () => {
    const r = replayer();
    r.apply(sending);
    expect(r.before.has(key)).toBe(false);
    const again: JournalFact = { ...sending, at: '2026-01-02T00:00:00.000Z' };
    r.apply(again);
    expect(r.before.get(key)).toEqual(sending);
    expect(r.known.get(key)).toEqual(again);
    r.apply(unsent);
    expect(r.known.get(key)).toEqual(sending);
    expect(r.before.has(key)).toBe(false);
  });

  it('the journal line changes nothing; a parser fact is kept per target; a reset forgets documents, not parsers', () => {
    const r = replayer();
    r.apply(completed);
    r.apply(sending);
    const p: JournalFact = { fact: 'parser', at: common.at, target: 't2', parser: 't1' };
    r.apply(p);
    r.apply(versionFact());
    expect(r.known.size).toBe(1);
    expect(r.parsers.get('t2')).toEqual(p);
    r.apply({ fact: 'reset', at: common.at });
    expect(r.known.size).toBe(0);
    expect(r.before.size).toBe(0);
    expect(r.parsers.get('t2')).toEqual(p);
  });

  it('a replay goes on from a state it was given', () => {
    const first = replayer();
    first.apply(submitted);
    const next = replayer({ known: first.known, before: first.before, parsers: first.parsers });
    next.apply(completed);
    expect(first.known.get(key)).toEqual(completed);
  });

  it('a first send drops a stale entry an index still held for the document', () => {
    const known = new Map<string, KnownState>();
    const before = new Map<string, KnownState | undefined>([[key, completed]]);
    applyFact({ known, before, parsers: new Map() }, sending);
    expect(before.has(key)).toBe(false);
    expect(known.get(key)).toEqual(sending);
  });

  it('applyFact works over any stores', () => {
    const known = new Map<string, KnownState>();
    const before = new Map<string, KnownState | undefined>();
    const parsers = new Map();
    applyFact({ known, before, parsers }, submitted);
    expect(known.get(key)).toEqual(submitted);
  });
});

describe('journal: reading text', () => {
  it('blank lines are nothing; a line that is not JSON is counted and skipped; the end tells a torn write', () => {
    const whole = parseJournal(`${line(submitted)}\n  \n${line(completed)}`);
    expect(whole).toEqual({ facts: [submitted, completed], skipped: 0, torn: false });
    const torn = parseJournal(`${line(submitted)}{"fact":`);
    expect(torn.skipped).toBe(1);
    expect(torn.torn).toBe(true);
    expect(parseJournal('')).toEqual({ facts: [], skipped: 0, torn: false });
    expect(parseJournal('x\ny\n')).toMatchObject({ skipped: 2, torn: false });
  });

  it('a fact this version cannot read stops the run, naming the line', () => {
    expect(() => parseJournal(`${line(submitted)}${line({ fact: 'teleported', ...common })}`, 'j.jsonl')).toThrow(
      /j\.jsonl \(line 2\) holds a fact this version of extract cannot read/,
    );
    expect(() => readFact({ fact: 'teleported' }, 'here')).toThrow(/^here holds a fact/);
    expect(() => parseJournal(line({ fact: 'teleported' }))).toThrow(/^the journal \(line 1\) holds a fact/);
    expect(() => replayJournal(line({ fact: 'teleported' }))).toThrow(/^the journal \(line 1\) holds a fact/);
    expect(() => readFact({ fact: 'teleported' }, 'here')).toThrow(expect.objectContaining({ code: 'usage' }));
    expect(() => readFact({ fact: 'teleported' }, 'here')).toThrow(/nothing was sent$/);
  });

  it('a journal of a newer format stops the run; this format and older ones read', () => {
    expect(readFact(versionFact(), 'j')).toMatchObject({ fact: 'journal', version: JOURNAL_VERSION });
    expect(readFact({ fact: 'journal', at: common.at, version: 1 }, 'j')).toMatchObject({ version: 1 });
    expect(() => readFact({ fact: 'journal', at: common.at, version: JOURNAL_VERSION + 1 }, 'j')).toThrow(
      /cannot read/,
    );
    expect(readFact(completed, 'j')).toEqual(completed);
  });

  it('a replay says what it skipped and whether the text ends mid-line', () => {
    const r = replayJournal(
      `${line(submitted)}not json\n${line({ fact: 'parser', at: common.at, target: 't9', parser: 't1' })}{`,
    );
    expect(r.skipped).toBe(2);
    expect(r.torn).toBe(true);
    expect(r.known.get(key)).toEqual(submitted);
    expect(r.parsers.get('t9')).toMatchObject({ parser: 't1' });
  });

  it('a missing journal is empty; a journal that cannot be read is an error', async () => {
    expect(await readJournal(join(dir, 'none.jsonl'))).toEqual({
      known: new Map(),
      parsers: new Map(),
      skipped: 0,
      torn: false,
    });
    await expect(readJournal(dir)).rejects.toMatchObject({ code: 'EISDIR' });
  });
});

describe('journal: writing', () => {
  it('a new journal starts with its format version, then each fact on its own line', async () => {
    const path = join(dir, 'j.jsonl');
    const w = await openJournal(path, false);
    await w.append(submitted);
    await w.close();
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ fact: 'journal', version: JOURNAL_VERSION });
    expect(JSON.parse(lines[1] ?? '')).toEqual(submitted);
    expect(lines[2]).toBe('');
  });

  it('an existing journal is appended to as it is, or after a fresh line when torn', async () => {
    const path = join(dir, 'j.jsonl');
    await writeFile(path, line(submitted));
    const w = await openJournal(path, false);
    await w.append(completed);
    await w.close();
    expect(await readFile(path, 'utf8')).toBe(line(submitted) + line(completed));
    await writeFile(path, `${line(submitted)}{"fa`);
    const t = await openJournal(path, true);
    await t.append(completed);
    await t.close();
    expect(await readFile(path, 'utf8')).toBe(`${line(submitted)}{"fa\n${line(completed)}`);
  });

  it('a write that takes the bytes a few at a time still writes them all; one that takes none is an I/O error', async () => {
    const path = join(dir, 'j.jsonl');
    await writeFile(path, line(submitted));
    const { writeSync } = await import('node:fs');
    const w = await openJournal(path, false, (fd, bytes, offset, length) =>
      writeSync(fd, bytes, offset, Math.min(7, length)),
    );
    await w.append(completed);
    await w.close();
    expect(await readFile(path, 'utf8')).toBe(line(submitted) + line(completed));
    const stuck = await openJournal(path, false, () => 0);
    await expect(stuck.append(completed)).rejects.toMatchObject({
      code: 'EIO',
      message: 'the journal accepted no bytes',
    });
    await stuck.close().catch(() => {});
  });

  it('the version fact is dated', () => {
    expect(versionFact(new Date(0))).toEqual({ fact: 'journal', at: '1970-01-01T00:00:00.000Z', version: 2 });
  });
});

describe('journal: lookups', () => {
  const other: KnownState = { ...completed, sha256: 'def', target: 't2', file: 'b.pdf' };
  const map = new Map<string, KnownState>([
    [key, completed],
    [stateKey('def', 't2'), other],
  ]);

  it('a map as a lookup: by key, by file name, its targets', () => {
    const l = knownFromMap(map);
    expect(l.get(key)).toEqual(completed);
    expect(l.get('t3:x')).toBeUndefined();
    expect(l.names('a.pdf')).toBe(true);
    expect(l.names('b.pdf')).toBe(true);
    expect(l.names('c.pdf')).toBe(false);
    expect([...l.targets()]).toEqual(['t1', 't2']);
    expect(asLookup(map).get(key)).toEqual(completed);
    expect(asLookup(l)).toBe(l);
  });

  it('the distinct targets of keys grouped by target', () => {
    expect(targetsOf(['a:1', 'a:2', 'b:1', 'b:3', 'c:1'])).toEqual(new Set(['a', 'b', 'c']));
    expect(targetsOf([])).toEqual(new Set());
    expect([...targetsOf(['b:1', 'a:1'])]).toEqual(['b', 'a']);
  });
});
