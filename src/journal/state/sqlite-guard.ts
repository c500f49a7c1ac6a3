import { statSync } from 'node:fs';
import { isDiskFull, isSqliteBusy, sqliteCode } from '../../errno.ts';
import { ExtractError } from '../../errors.ts';
import type { OpenStateOptions } from './journal-state.ts';
import { describe, OutageWait } from './outage.ts';

/** SQLite's SQLITE_READONLY and SQLITE_NOTADB (sqlite.org/rescode.html). */
const READONLY = 8;
const NOTADB = 26;

/**
 * Every operation goes through here: another process's write is waited for (busy timeout,
 * then retries up to --state-wait, outage.ts), and SQLite's and the file system's errors become
 * an ExtractError that says what to do.
 */
export class Guard {
  readonly where: string;
  readonly #wait: OutageWait;

  constructor(where: string, options: OpenStateOptions) {
    this.where = where;
    this.#wait = new OutageWait(options, {
      worthWaiting: isSqliteBusy,
      refusal: (what, err) => journalRefusal(where, what, err),
      waiting: (outageMs) =>
        `${where}: another process holds the journal; waiting up to ${Math.round(outageMs / 1000)} s`,
      gaveUp: (what, seconds) =>
        `could not ${what}: the journal ${where} has been locked by another process for ${seconds} s; nothing recorded is lost, rerun the same command once it is free (submitted documents are collected, not paid again)`,
      pauseMs: (n) => Math.min(1_000, 50 * 2 ** Math.min(n, 5)),
    });
  }

  run<T>(what: string, work: () => T): Promise<T> {
    return this.#wait.run(what, work);
  }
}

/** SQLite's and the file system's errors, as what happened to the journal and what to do next. */
export function journalRefusal(where: string, what: string, err: unknown): ExtractError {
  if (isDiskFull(err))
    return new ExtractError(
      'state',
      `the journal ${where}: could not ${what}, the disk is full. Free some space, then rerun the same command: what the journal holds is kept, and documents already submitted are collected, not paid again`,
      { cause: err },
    );
  const code = sqliteCode(err);
  if (code === NOTADB)
    return new ExtractError(
      'usage',
      `${where} is not an extract journal (not a SQLite database): name another file with --state, or a .jsonl file for the JSON Lines journal`,
      { cause: err },
    );
  if (code === READONLY || isDirectory(where))
    return new ExtractError(
      'state',
      `the journal ${where}: could not ${what} (${describe(err)}): make the file and its folder writable, or name another journal with --state`,
      { cause: err },
    );
  return new ExtractError(
    'state',
    `the journal ${where}: could not ${what} (${describe(err)}): check the file and its folder, then rerun the same command`,
    { cause: err },
  );
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
