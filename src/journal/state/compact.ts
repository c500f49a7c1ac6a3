import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Log } from '../../client/deps.ts';
import { ExtractError } from '../../errors.ts';
import { transaction } from '../../sqlite.ts';
import { replayer, versionFact, type JournalFact, type KnownState, type ParserFact } from '../journal.ts';
import { acquireLock, type LockDeps } from '../lock.ts';
import type { StateSpec } from './index.ts';
import { indexPathFor, openIndexed } from './journal-index.ts';
import { appendLine } from './file.ts';
import { parseJournal } from '../journal-read.ts';
import { takeBackIntoFile } from './rescue.ts';
import { factsIn, fileSize, writeMark } from './sqlite-mark.ts';
import { writeDurably } from '../../private-files.ts';
import { schemaVersion } from './sqlite-schema.ts';

/**
 * `extract journal compact`: a journal keeps every fact a run ever wrote (two or three a
 * document, more for a document sent again); compaction keeps, per document, only the facts
 * its replay needs to say the same thing: its latest state, and, for a send in flight, what
 * was known before it (which a refusal restores). So it keeps both guarantees: a document
 * completed, submitted or possibly charged is still known as such (never paid twice), and each
 * completed document keeps its results (never lost). What goes is history that no rule reads:
 * superseded facts, refused resends, parser facts replaced by newer ones, torn lines.
 *
 * The JSONL file is rewritten beside itself and renamed over it, under its lock; the SQLite
 * journal is compacted in one transaction (each document keeps the ids of its latest facts,
 * so a run that started before the compaction sees no change), then vacuumed.
 */

export type Compacted = {
  journal: string;
  documents: number;
  factsBefore: number;
  factsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
};

/** The facts that replay to `state` for one document (what `unsent` would restore first). */
function factsFor(state: KnownState, before: KnownState | undefined): KnownState[] {
  return state.fact === 'sending' && before !== undefined ? [before, state] : [state];
}

export async function compactJournal(
  spec: StateSpec,
  options: { log: Log; lock?: LockDeps | undefined; now?: () => number },
): Promise<Compacted> {
  if (spec.kind === 'postgres')
    throw new ExtractError(
      'usage',
      'extract journal compact works on a journal file (JSON Lines or SQLite); a PostgreSQL journal is kept by its database',
    );
  return spec.kind === 'file' ? compactFile(spec.path, options) : compactSqlite(spec.path, options);
}

async function compactFile(path: string, options: { log: Log; lock?: LockDeps | undefined }): Promise<Compacted> {
  const lock = await acquireLock(path, options.lock);
  try {
    await takeBackIntoFile(path, (fact) => appendLine(path, fact), options.log);
    const bytesBefore = fileSize(path);
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      throw new ExtractError('usage', `no journal at ${path}: nothing to compact`);
    }
    const parsed = parseJournal(text, path);
    const replay = replayer();
    for (const fact of parsed.facts) replay.apply(fact);
    const lines: string[] = [JSON.stringify(versionFact())];
    for (const fact of replay.parsers.values()) lines.push(JSON.stringify(fact));
    let factsAfter = lines.length;
    for (const [key, state] of replay.known) {
      for (const fact of factsFor(state, replay.before.get(key))) lines.push(JSON.stringify(fact));
      factsAfter += state.fact === 'sending' && replay.before.get(key) !== undefined ? 2 : 1;
    }
    const temporary = `${path}.compact-${process.pid}.tmp`;
    const fd = openSync(temporary, 'w', statSync(path).mode & 0o777);
    try {
      writeDurably(fd, `${lines.join('\n')}\n`);
    } catch (err) {
      closeSync(fd);
      rmSync(temporary, { force: true });
      throw err;
    }
    closeSync(fd);
    renameSync(temporary, path);
    syncFolder(path);
    // The index was of the old file: built again now, so the next run does not replay the journal.
    rmSync(indexPathFor(path), { force: true });
    const indexed = await openIndexed(path, async () => parseJournal, false);
    try {
      indexed.save();
    } finally {
      indexed.close();
    }
    return {
      journal: path,
      documents: replay.known.size,
      factsBefore: parsed.facts.length,
      factsAfter,
      bytesBefore,
      bytesAfter: fileSize(path),
    };
  } finally {
    await lock.release();
  }
}

async function compactSqlite(path: string, options: { now?: () => number }): Promise<Compacted> {
  const now = options.now ?? Date.now;
  const bytesBefore = fileSize(path) + fileSize(`${path}-wal`);
  if (bytesBefore === 0) throw new ExtractError('usage', `no journal at ${path}: nothing to compact`);
  const db = new DatabaseSync(path, { timeout: 5_000 });
  try {
    if (schemaVersion(db, path) === 0) throw new ExtractError('usage', `${path} holds no journal: nothing to compact`);
    const counted = () => Number(db.prepare('SELECT count(*) AS n FROM extract_facts').get()?.n ?? 0);
    let factsBefore = 0;
    let documents = 0;
    transaction(db, () => {
      const live = db
        .prepare('SELECT count(*) AS n FROM extract_claims WHERE worker IS NOT NULL AND expires > ?')
        .get(now());
      if (Number(live?.n ?? 0) > 0)
        throw new ExtractError(
          'usage',
          `${path} is in use: a run holds documents in it now; compact it when no run is sending`,
        );
      factsBefore = counted();
      // Parser facts: the latest per key fingerprint.
      const parsers = new Map<string, { id: number; fact: ParserFact }>();
      for (const row of db.prepare('SELECT id, body FROM extract_facts WHERE key IS NULL ORDER BY id').iterate()) {
        const fact = JSON.parse(String(row.body)) as JournalFact;
        if (fact.fact === 'parser') parsers.set(fact.target, { id: Number(row.id), fact });
      }
      const keep = new Set([...parsers.values()].map((p) => p.id));
      const drop = db.prepare('DELETE FROM extract_facts WHERE id = ?');
      for (const row of db.prepare('SELECT id FROM extract_facts WHERE key IS NULL').all())
        if (!keep.has(Number(row.id))) drop.run(Number(row.id));
      // Each document: its facts replaced by those its replay needs, under the ids of its latest facts.
      const ids = db.prepare('SELECT id FROM extract_facts WHERE key = ? ORDER BY id DESC LIMIT 2');
      const dropKey = db.prepare('DELETE FROM extract_facts WHERE key = ?');
      const insert = db.prepare(
        'INSERT INTO extract_facts (id, key, fact, body, worker, at) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const row of db
        .prepare('SELECT key, state, results, before, last_fact, last_worker FROM extract_documents')
        .all()) {
        const key = String(row.key);
        if (row.state === null) {
          // Nothing known (a first send refused): the document's facts say nothing a run needs.
          dropKey.run(key);
          db.prepare('DELETE FROM extract_documents WHERE key = ?').run(key);
          continue;
        }
        documents++;
        const state = JSON.parse(String(row.state)) as KnownState;
        if (state.fact === 'completed' && typeof row.results === 'string')
          (state as { results: unknown }).results = JSON.parse(row.results);
        const before = row.before === null ? undefined : (JSON.parse(String(row.before)) as KnownState);
        const facts = factsFor(state, before);
        const latest = ids.all(key).map((r) => Number(r.id));
        dropKey.run(key);
        facts.forEach((fact, i) => {
          // The last fact keeps the document's last_fact id; an earlier one the id before it (or a new one).
          const id = i === facts.length - 1 ? Number(row.last_fact) : (latest[1] ?? null);
          insert.run(id, key, fact.fact, JSON.stringify(fact), row.last_worker ?? null, now());
        });
      }
      // Facts of no document left (none should be): gone with the rest of the history.
      db.exec('DELETE FROM extract_facts WHERE key IS NOT NULL AND key NOT IN (SELECT key FROM extract_documents)');
    });
    const factsAfter = counted();
    db.exec('VACUUM');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    // Fewer facts now, on purpose: the journal's noted size follows (sqlite-mark.ts).
    writeMark(path, factsIn(db));
    return {
      journal: path,
      documents,
      factsBefore,
      factsAfter,
      bytesBefore,
      bytesAfter: fileSize(path) + fileSize(`${path}-wal`),
    };
  } finally {
    db.close();
  }
}

/** The rename is durable once the folder's entry is on disk. */
function syncFolder(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dirname(path), 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse an fsync of a folder: the rename stands as the filesystem keeps it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
