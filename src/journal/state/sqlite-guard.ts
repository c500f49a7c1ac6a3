import { statSync } from 'node:fs';
import { realSleep } from '../../client/deps.ts';
import { isDiskFull, isSqliteBusy, sqliteCode } from '../../errno.ts';
import { ExtractError } from '../../errors.ts';
import { ClaimLostError, type OpenStateOptions } from './journal-state.ts';

/** How long a journal may stay locked by other processes before the run stops (--state-wait's default). */
const DEFAULT_OUTAGE_MS = 60_000;

/** SQLite's SQLITE_READONLY and SQLITE_NOTADB (sqlite.org/rescode.html). */
const READONLY = 8;
const NOTADB = 26;

/**
 * Every operation goes through here: another process's write is waited for (busy timeout,
 * then retries up to --state-wait), and SQLite's and the file system's errors become an
 * ExtractError that says what to do.
 */
export class Guard {
  readonly where: string;
  readonly #options: OpenStateOptions;
  #busySince: number | undefined;

  constructor(where: string, options: OpenStateOptions) {
    this.where = where;
    this.#options = options;
  }

  async run<T>(what: string, work: () => T): Promise<T> {
    const outageMs = this.#options.outageMs ?? DEFAULT_OUTAGE_MS;
    const sleep = this.#options.sleep ?? realSleep;
    for (let n = 0; ; n++) {
      try {
        const out = work();
        this.#busySince = undefined;
        return out;
      } catch (err) {
        if (err instanceof ExtractError || err instanceof ClaimLostError) throw err;
        if (!isSqliteBusy(err)) throw journalRefusal(this.where, what, err);
        const now = Date.now();
        if (this.#busySince === undefined) {
          this.#busySince = now;
          this.#options.log(
            'warn',
            `${this.where}: another process holds the journal; waiting up to ${Math.round(outageMs / 1000)} s`,
          );
        }
        if (now - this.#busySince >= outageMs) {
          throw new ExtractError(
            'state',
            `could not ${what}: the journal ${this.where} has been locked by another process for ${Math.round((now - this.#busySince) / 1000)} s; nothing recorded is lost, rerun the same command once it is free (submitted documents are collected, not paid again)`,
            { cause: err },
          );
        }
        await sleep(Math.min(1_000, 50 * 2 ** Math.min(n, 5)));
      }
    }
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

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
