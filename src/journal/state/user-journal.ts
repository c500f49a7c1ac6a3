import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { Log } from '../../client/deps.ts';
import type { SqliteState } from './sqlite-state.ts';

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
 * `.extract-state.jsonl` (before that). Only those that exist.
 */
export function earlierJournals(env: Record<string, string | undefined>, baseUrl: string, cwd: string): string[] {
  return [`${journalStem(env, baseUrl)}.jsonl`, join(cwd, LEGACY_STATE)].filter((path) => existsSync(path));
}

/** Makes the journal's folder (private to the user: it names every document sent). */
export function makeJournalFolder(path: string): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
}

/** Once imported, the old journal is kept under another name (for a downgrade), and not imported again. */
function retireLegacy(path: string): string {
  const to = `${path}.imported`;
  renameSync(path, to);
  return to;
}

/**
 * Takes every fact of an earlier version's journal into the user's journal, then retires the
 * old file: nothing it knew is paid for again, from any folder. Its facts are validated as any
 * journal's (a fact too new stops the run before anything is imported); the import is keyed by
 * the file, so a run stopped between the import and the rename takes nothing twice.
 */
export async function importLegacy(
  journal: Pick<SqliteState, 'importFacts' | 'where'>,
  path: string,
  log: Log,
): Promise<void> {
  const { readFile } = await import('node:fs/promises');
  const { parseJournal } = await import('../journal-read.ts');
  const { facts } = parseJournal(await readFile(path, 'utf8'), path);
  const taken = await journal.importFacts(facts, path);
  const keptAs = retireLegacy(path);
  log(
    'info',
    `imported the ${taken} facts of ${path} into ${journal.where}, the journal every folder now shares; the old file is kept as ${keptAs}`,
  );
}

/**
 * The user's journal of a service this run is about to make (none there yet), or undefined: a
 * journal named by --state, a dry run (makes none) or one that exists.
 */
export function journalToMake(
  env: Record<string, string | undefined>,
  baseUrl: string,
  state: string | null | undefined,
  dryRun: boolean,
): string | undefined {
  if (state !== undefined || dryRun) return undefined;
  const path = userJournalPath(env, baseUrl);
  return existsSync(path) ? undefined : path;
}

/**
 * Removes a journal this run made for a service that never answered (a mistyped base URL, a
 * host that is down): nothing was submitted, nothing charged, nothing learnt, so it would only
 * be a file in the user's state folder named after a URL that does not work. Its companions
 * (the size mark, the stat cache, SQLite's own) go with it.
 */
export function discardJournal(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal', '.good', '.stat-cache'])
    rmSync(`${path}${suffix}`, { force: true });
}
