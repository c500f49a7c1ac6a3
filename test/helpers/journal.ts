import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** A journal line as the tests read it: any fact, fields checked where a test needs them. */
export type Fact = Record<string, unknown>;

/**
 * The journal's lines, parsed. A crash mid-write can leave one torn line; the next run starts
 * on a fresh line after it, so a torn line may sit in the middle. Returns them counted. A
 * journal not written yet has no lines.
 */
export function readJournalLines(path: string): { facts: Fact[]; torn: number } {
  const facts: Fact[] = [];
  let torn = 0;
  if (!existsSync(path)) return { facts, torn };
  if (path.endsWith('.sqlite')) return { facts: readSqliteFacts(path), torn };
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      facts.push(JSON.parse(line) as Fact);
    } catch {
      torn++;
    }
  }
  return { facts, torn };
}

/** The facts of a SQLite journal (state/sqlite.ts), in the order written, read without taking a lock. */
function readSqliteFacts(path: string): Fact[] {
  return sqliteBodies(path).map((body) => JSON.parse(body) as Fact);
}

function sqliteBodies(path: string): string[] {
  const db = new DatabaseSync(path, { readOnly: true, timeout: 10_000 });
  try {
    // A run that has just made the file may not have made its tables yet.
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'extract_facts'").get() === undefined) return [];
    return db
      .prepare('SELECT body FROM extract_facts ORDER BY id')
      .all()
      .map((row) => String(row.body));
  } finally {
    db.close();
  }
}

/** A journal as JSON Lines text, whichever backend keeps it (a SQLite journal's facts are the lines the file would hold). */
export function journalText(path: string): string {
  return path.endsWith('.sqlite') ? sqliteBodies(path).join('\n') : readFileSync(path, 'utf8');
}

/**
 * The journal a run in `cwd` keeps by default, where the CLI helpers put it (the user's journal
 * of the service under `cwd/.state`, test/helpers/cli.ts stateHomeIn); with no such journal,
 * an earlier version's `.extract-state.jsonl` in `cwd`.
 */
export function defaultJournalIn(cwd: string): string {
  const folder = join(cwd, '.state', 'extract', 'journals');
  const found = existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith('.sqlite')) : [];
  if (found.length > 1)
    throw new Error(`${folder} holds ${found.length} journals: the test used more than one service`);
  return found[0] !== undefined ? join(folder, found[0]) : join(cwd, '.extract-state.jsonl');
}

/** The facts of the journal a run in `cwd` keeps by default, torn lines skipped. */
export function journalFacts(cwd: string): Fact[] {
  return readJournalLines(defaultJournalIn(cwd)).facts.filter((f) => f.fact !== 'journal');
}
