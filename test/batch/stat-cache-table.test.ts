import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InputFile } from '../../src/batch/discover.ts';
import { openStatCache } from '../../src/batch/plan/stat-cache.ts';

/**
 * The stat cache is a table of the journal: in a SQLite journal itself, beside a JSON Lines
 * journal in a database of its own. What a cache of an earlier version left is a miss, never an
 * error, and never costs the journal anything.
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'extract-stat-table-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const input = (realPath: string, stamp: string): InputFile => ({
  file: realPath,
  path: realPath,
  realPath,
  size: 1,
  explicit: false,
  stamp,
});
const facts = { sha256: 'a'.repeat(64), mimeType: 'application/pdf' };
const long = (): number => Date.now() + 10_000;

describe('the stat cache as a table', () => {
  it("in a SQLite journal: a table beside the journal's own, which are left as they were", () => {
    const journal = join(dir, 'state.sqlite');
    const db = new DatabaseSync(journal);
    db.exec(
      "CREATE TABLE extract_facts (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO extract_facts VALUES (1, 'x')",
    );
    db.close();
    const cache = openStatCache(journal, { ownFile: false });
    cache.set(input('/r/a', '1:1:1:1:1'), facts, long());
    cache.save();
    cache.close();
    const again = openStatCache(journal, { ownFile: false });
    again.prefetch([input('/r/a', '1:1:1:1:1'), input('/r/b', '1:1:1:1:1')]);
    expect(again.get(input('/r/a', '1:1:1:1:1'))).toEqual(facts);
    expect(again.get(input('/r/b', '1:1:1:1:1'))).toBeUndefined();
    again.close();
    const check = new DatabaseSync(journal, { readOnly: true });
    expect(check.prepare('SELECT body FROM extract_facts').all()).toEqual([{ body: 'x' }]);
    check.close();
  });

  it('a journal that is not a database is never replaced by its cache: a miss, the file untouched', () => {
    const journal = join(dir, 'state.sqlite');
    writeFileSync(journal, 'not a database, and not the cache to throw away\n');
    const cache = openStatCache(journal, { ownFile: false });
    expect(cache.get(input('/r/a', '1:1:1:1:1'))).toBeUndefined();
    cache.set(input('/r/a', '1:1:1:1:1'), facts, long());
    cache.save();
    cache.close();
    expect(readFileSync(journal, 'utf8')).toBe('not a database, and not the cache to throw away\n');
  });

  it("an earlier version's cache file beside a JSON Lines journal (its NUL format) is a miss, then replaced", () => {
    const path = join(dir, 'state.jsonl.stat-cache');
    writeFileSync(
      path,
      `crc32:0:10\nextract-stat-cache 3\n/r/a\u00001:1:1:1:1\u0000${'a'.repeat(64)}\u0000application/pdf\u0000`,
    );
    const cache = openStatCache(path);
    expect(cache.get(input('/r/a', '1:1:1:1:1'))).toBeUndefined();
    cache.set(input('/r/a', '1:1:1:1:1'), facts, long());
    cache.save();
    cache.close();
    expect(openStatCache(path).get(input('/r/a', '1:1:1:1:1'))).toEqual(facts);
  });

  it('a row changed behind its back (its checksum no longer holds) is not trusted', () => {
    const path = join(dir, 'state.jsonl.stat-cache');
    const cache = openStatCache(path);
    cache.set(input('/r/a', '1:1:1:1:1'), facts, long());
    cache.save();
    cache.close();
    const db = new DatabaseSync(path);
    db.exec(`UPDATE extract_stat_cache SET sha256 = '${'0'.repeat(64)}'`);
    db.close();
    expect(openStatCache(path).get(input('/r/a', '1:1:1:1:1'))).toBeUndefined();
  });

  it('a dry run reads the cache and writes nothing, not even the table', () => {
    const journal = join(dir, 'state.sqlite');
    new DatabaseSync(journal).close();
    const cache = openStatCache(journal, { ownFile: false, readOnly: true });
    cache.set(input('/r/a', '1:1:1:1:1'), facts, long());
    cache.save();
    cache.close();
    const db = new DatabaseSync(journal, { readOnly: true });
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'extract_stat_cache'").all()).toEqual([]);
    db.close();
  });
});
