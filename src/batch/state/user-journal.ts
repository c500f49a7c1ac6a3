import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { StateJournal } from './index.ts';

/**
 * Where the journal lives when --state does not say: in the user's state directory, one per
 * service, so that every run of this user against that service (cron from $HOME, a second
 * checkout, a shell in another folder) shares one history and pays for a document once.
 * Documents are keyed by parser within it (identity.ts). XDG's rule: $XDG_STATE_HOME when it
 * is an absolute path, else ~/.local/state.
 */

/** The journal earlier versions kept in the working directory; a run there imports it once. */
export const LEGACY_STATE = '.extract-state.jsonl';

export function stateHome(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return xdg;
  return join(env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir(), '.local', 'state');
}

/** `<state home>/extract/journals/<host>_<port>-<8 hex of the base URL>.jsonl` */
export function userJournalPath(env: Record<string, string | undefined>, baseUrl: string): string {
  const url = new URL(baseUrl);
  const host = `${url.hostname}${url.port !== '' ? `_${url.port}` : ''}`.replace(/[^A-Za-z0-9.-]/g, '_');
  const digest = createHash('sha256').update(baseUrl).digest('hex').slice(0, 8);
  return join(stateHome(env), 'extract', 'journals', `${host}-${digest}.jsonl`);
}

/** Makes the journal's folder (private to the user: it names every document sent). */
export function makeJournalFolder(path: string): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
}

/** The working directory's journal of an earlier version, if there is one to import. */
export function legacyJournal(cwd: string): string | undefined {
  const path = join(cwd, LEGACY_STATE);
  return existsSync(path) ? path : undefined;
}

/** Once imported, the old journal is kept under another name (for a downgrade), and not imported again. */
export function retireLegacy(path: string): string {
  const to = `${path}.imported`;
  renameSync(path, to);
  return to;
}

/**
 * Copies every fact of an earlier version's working-directory journal into `journal`, then
 * retires the old file: nothing it knew is paid for again, from any folder. Its facts are
 * validated as any journal's (a fact too new stops the run before anything is imported).
 */
export async function importLegacy(
  journal: Pick<StateJournal, 'append' | 'where'>,
  path: string,
): Promise<{ facts: number; keptAs: string }> {
  const { readFile } = await import('node:fs/promises');
  const { parseJournal } = await import('../journal-facts.ts');
  const { facts } = parseJournal(await readFile(path, 'utf8'), path);
  const documents = facts.filter((f) => f.fact !== 'journal');
  await Promise.all(documents.map((f) => journal.append(f)));
  return { facts: documents.length, keptAs: retireLegacy(path) };
}
