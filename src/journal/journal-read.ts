import { readFile } from 'node:fs/promises';
import { hasErrno } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { JOURNAL_VERSION, replayer, type Replay } from './journal.ts';
import { JournalFact } from './journal-facts.ts';

/**
 * Journal text read and checked: each line against the facts' schema (journal-facts.ts), then
 * replayed (journal.ts). Imported with `await import()` where text must be read, so a run that
 * reads none (an index that is current) loads no zod.
 */

/** Replays the journal text (see replayer for the rules). */
export function replayJournal(text: string, where = 'the journal'): Replay {
  const replay = replayer();
  const parsed = parseJournal(text, where);
  for (const fact of parsed.facts) replay.apply(fact);
  return { known: replay.known, parsers: replay.parsers, skipped: parsed.skipped, torn: parsed.torn };
}

/**
 * A fact as stored (a journal line parsed as JSON, a database row). A fact this version cannot
 * read was written by a newer one (a kind, a field or a value it does not know): the run stops
 * rather than take the document for unknown and pay for it again.
 */
export function readFact(value: unknown, where: string): JournalFact {
  const parsed = JournalFact.safeParse(value);
  if (parsed.success && (parsed.data.fact !== 'journal' || parsed.data.version <= JOURNAL_VERSION)) return parsed.data;
  throw new ExtractError(
    'usage',
    `${where} holds a fact this version of extract cannot read (written by a newer extract, or edited by hand): upgrade extract (npm install -g extract-cli@latest) and rerun; nothing was sent`,
  );
}

/**
 * The facts of the journal text in order. A line that is not JSON is a torn write (a crash
 * mid-line): counted and skipped. A line that is JSON but no fact this version knows stops the
 * run (readFact).
 */
export function parseJournal(
  text: string,
  where = 'the journal',
): { facts: JournalFact[]; skipped: number; torn: boolean } {
  const facts: JournalFact[] = [];
  let skipped = 0;
  let n = 0;
  for (const line of text.split('\n')) {
    n++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    facts.push(readFact(value, `${where} (line ${n})`));
  }
  return { facts, skipped, torn: text.length > 0 && !text.endsWith('\n') };
}

export async function readJournal(path: string): Promise<Replay> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) return { known: new Map(), parsers: new Map(), skipped: 0, torn: false };
    throw err;
  }
  return replayJournal(text, path);
}
