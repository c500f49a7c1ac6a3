import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openForWriting } from '../../open-files.ts';

/**
 * Where the journal lives when --state does not say: in the user's state directory, one per
 * service, so that every run of this user against that service (cron from $HOME, a second
 * checkout, a shell in another folder) shares one history and pays for a document once.
 * Documents are keyed by parser within it (identity.ts). It is a SQLite journal (state/sqlite.ts):
 * runs on different folders at once claim documents instead of waiting for a lock, and two that
 * meet on one document pay for it once. XDG's rule: $XDG_STATE_HOME when it is an absolute
 * path, else ~/.local/state.
 */

/** The journal earlier versions kept in the working directory; a run there imports it once. */
export const LEGACY_STATE = '.extract-state.jsonl';

function stateHome(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return xdg;
  return join(env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir(), '.local', 'state');
}

/** `<state home>/extract/journals/<host>_<port>-<8 hex of the base URL>.sqlite` */
export function userJournalPath(env: Record<string, string | undefined>, baseUrl: string): string {
  return `${journalStem(env, baseUrl)}.sqlite`;
}

function journalStem(env: Record<string, string | undefined>, baseUrl: string): string {
  const url = new URL(baseUrl);
  const host = `${url.hostname}${url.port !== '' ? `_${url.port}` : ''}`.replace(/[^A-Za-z0-9.-]/g, '_');
  const digest = createHash('sha256').update(baseUrl).digest('hex').slice(0, 8);
  return join(stateHome(env), 'extract', 'journals', `${host}-${digest}`);
}

/**
 * The journals of earlier versions a default run takes in once: the user's JSON Lines journal
 * of this service (0.1's default, beside the SQLite one) and the working directory's
 * `.extract-state.jsonl` (before that). Only those that exist (journal/earlier.ts takes them in).
 */
export function earlierJournals(env: Record<string, string | undefined>, baseUrl: string, cwd: string): string[] {
  return [`${journalStem(env, baseUrl)}.jsonl`, join(cwd, LEGACY_STATE)].filter((path) => existsSync(path));
}

/** The user's journal of a service as a run finds it. */
export type UserJournal = {
  path: string;
  /** Earlier versions' journals of this service and folder (earlierJournals). */
  earlier: string[];
  /** The journal's path when this run makes it (none there yet; never in a dry run, which makes none). */
  made: string | undefined;
};

/**
 * The user's journal of this service for a run: where it is, the earlier versions' journals it
 * takes in, and whether this run makes it. A run that writes makes its folder first (private to
 * the user: it names every document sent); a dry run makes nothing.
 */
export function userJournal(
  env: Record<string, string | undefined>,
  baseUrl: string,
  cwd: string,
  dryRun: boolean,
): UserJournal {
  const path = userJournalPath(env, baseUrl);
  const earlier = earlierJournals(env, baseUrl, cwd);
  if (dryRun) return { path, earlier, made: undefined };
  const made = existsSync(path) ? undefined : path;
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  return { path, earlier, made };
}

/**
 * Removes a journal this run made for a service that never answered (a mistyped base URL, a
 * host that is down): nothing was charged or learnt, so it would only be a file in the user's
 * state folder named after a URL that does not work. Its companions (the size mark, the stat
 * cache, SQLite's own) go with it. Only while no other run has used it (`worker` is this run's
 * name) and no other process here holds it open: two runs started together on a new machine both
 * find no journal, and the one whose service answered may be writing to it. Kept when in doubt.
 */
export async function discardJournal(path: string, worker: string): Promise<void> {
  const files = ['', '-wal', '-shm', '-journal', '.good', '.stat-cache'].map((suffix) => `${path}${suffix}`);
  if ((await openForWriting(files.filter((file) => existsSync(file)))).size > 0) return;
  if (!usedByNoOther(path, worker)) return;
  for (const file of files) rmSync(file, { force: true });
}

/** Whether no worker but `worker` ever opened the SQLite journal at `path` for writing; false when it cannot be read. */
function usedByNoOther(path: string, worker: string): boolean {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path);
    return db.prepare('SELECT 1 FROM extract_workers WHERE id <> ? LIMIT 1').get(worker) === undefined;
  } catch {
    return false;
  } finally {
    db?.close();
  }
}
