import { closeSync, constants, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import { hasErrno } from '../../errno.ts';
import { ExtractError } from '../../errors.ts';

/**
 * The SQLite journal's last known size, kept beside it (`<journal>.good`): how many facts it
 * held when a run last wrote to it. A journal that reads as less than that was damaged (a
 * write-ahead log with a torn or overwritten frame loses every later frame silently; a file
 * truncated or replaced by an empty one), and a run on it would pay again for every document it
 * forgot: it stops instead (exit 6) and says what to do. A journal file that is gone was removed
 * on purpose, and a new one starts.
 */

type Mark = { facts: number };

/** `facts` and the count in 20 digits: one fixed-width write in place replaces it, never a shorter text. */
const WIDTH = 20;
const FORMAT = /^facts (\d{20})\n$/;

function markPathFor(journal: string): string {
  return `${journal}.good`;
}

/** The mark, or undefined when there is none (a journal made before marks, or none yet) or it is unreadable. */
export function readMark(journal: string): Mark | undefined {
  let text: string;
  try {
    text = readFileSync(markPathFor(journal), 'utf8');
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
  const digits = FORMAT.exec(text)?.[1];
  return digits === undefined ? undefined : { facts: Number(digits) };
}

/**
 * The mark, kept open by the run that writes the journal: after each commit its count is written
 * in place (one small write, no new file), which a kill cannot tear. A mark that cannot be
 * written costs only this check.
 */
export class MarkWriter {
  readonly #fd: number | undefined;
  constructor(journal: string) {
    let fd: number | undefined;
    try {
      fd = openSync(markPathFor(journal), constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    } catch {
      fd = undefined;
    }
    this.#fd = fd;
  }

  write(facts: number): void {
    if (this.#fd === undefined) return;
    try {
      writeSync(this.#fd, `facts ${String(facts).padStart(WIDTH, '0')}\n`, 0);
    } catch {
      // A full disk: the mark keeps its last count, which still holds.
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
  }
}

/** Once, outside a run (a compaction): the mark rewritten to the journal's count. */
export function writeMark(journal: string, facts: number): void {
  const mark = new MarkWriter(journal);
  try {
    mark.write(facts);
  } finally {
    mark.close();
  }
}

/** The highest fact id of the journal: what the mark counts. */
export const FACTS = 'SELECT coalesce(max(id), 0) AS n FROM extract_facts';

export function factsIn(db: DatabaseSync): number {
  return Number(db.prepare(FACTS).get()?.n ?? 0);
}

/** Before the journal is opened: a mark beside a file that is gone is stale (the journal was removed). */
export function forgetMarkOfRemoved(journal: string): void {
  try {
    statSync(journal);
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) rmSync(markPathFor(journal), { force: true });
  }
}

/** Stops the run when the journal holds fewer facts (or no tables, or no bytes) than its mark says it had. */
export function checkIntact(journal: string, mark: Mark | undefined, found: number | 'no tables' | 'no bytes'): void {
  // A journal whose mark counts no fact had nothing to lose.
  if (mark === undefined || mark.facts === 0 || (typeof found === 'number' && found >= mark.facts)) return;
  const now = typeof found === 'number' ? `${found}` : found === 'no tables' ? 'no journal tables' : 'no bytes';
  throw new ExtractError(
    'state',
    `the journal ${journal} is damaged: it held ${mark.facts} fact${mark.facts === 1 ? '' : 's'} when a run last wrote to it, and now reads as ${now} ` +
      '(a torn write-ahead log after a crash, a truncated or replaced file). Nothing was sent: a run on it would pay again for every document it forgot. ' +
      `Restore the file from a backup if you have one (with its -wal file), remove ${markPathFor(journal)} (it counts the journal as it was), and rerun; to start a new journal knowingly, move both aside`,
  );
}

/** A file's size in bytes; 0 when it is not there. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
