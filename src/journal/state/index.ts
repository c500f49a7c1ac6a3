import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ExtractError } from '../../errors.ts';
import { redactUrl, rememberSecret } from '../../redact.ts';
import { guardJournal } from './rescue.ts';
export { JournalWriteError } from './rescue.ts';
export * from './journal-state.ts';
export { memoryState } from './memory.ts';
import type { OpenStateOptions, StateJournal } from './journal-state.ts';

export type StateSpec =
  | { kind: 'file'; path: string }
  /** takeIn: the journals of earlier versions it takes in once as it opens (user-journal.ts). */
  | { kind: 'sqlite'; path: string; takeIn?: readonly string[] }
  | { kind: 'postgres'; url: string };

/** A journal file SQLite keeps (state/sqlite.ts) rather than the JSON Lines file. */
const SQLITE_FILE = /\.(sqlite3?|db)$/i;

/**
 * `postgres://…` or `postgresql://…` is a database; `sqlite:PATH` or a path ending in .sqlite,
 * .sqlite3 or .db is a SQLite journal; anything else is a JSON Lines file.
 */
export function parseStateSpec(value: string, cwd: string): StateSpec {
  if (/^sqlite:/i.test(value) && !value.startsWith('sqlite://')) {
    const path = value.slice('sqlite:'.length);
    if (path === '') throw new ExtractError('usage', '--state sqlite: names no file: write it as sqlite:PATH');
    return { kind: 'sqlite', path: resolve(cwd, path) };
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    const path = canonicalPath(resolve(cwd, value));
    return SQLITE_FILE.test(value) ? { kind: 'sqlite', path } : { kind: 'file', path };
  }
  if (!/^postgres(ql)?:\/\//i.test(value)) {
    throw new ExtractError(
      'usage',
      `--state ${redactUrl(value)}: only a file path, sqlite:PATH or a postgres:// URL is supported`,
    );
  }
  try {
    rememberUrlPassword(new URL(value));
  } catch {
    throw new ExtractError(
      'usage',
      `the state URL ${redactUrl(value)} is not a URL: write it as postgres://user:password@host:5432/database`,
    );
  }
  return { kind: 'postgres', url: value };
}

/**
 * The journal's one name, whatever path names it (a symlink, `..`, a bind of the same folder):
 * its lock, index and stat cache sit beside the real file, so two runs naming one journal by
 * two paths meet at one lock. A journal not made yet is named by its folder's real path.
 */
function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/**
 * Opens the journal a spec names; heavy modules (pg) load only for their backend. A journal a
 * run writes to first takes back what earlier runs could not write, and is guarded so that a
 * refused write stops the run without losing an answer (rescue.ts).
 */
export async function openState(spec: StateSpec, options: OpenStateOptions): Promise<StateJournal> {
  const journal = await openBackend(spec, options);
  if (options.readOnly) return journal;
  const path = spec.kind === 'postgres' ? journal.where : spec.path;
  return guardJournal(journal, { path, file: spec.kind !== 'postgres', tookBack: spec.kind === 'file' }, options);
}

async function openBackend(spec: StateSpec, options: OpenStateOptions): Promise<StateJournal> {
  if (spec.kind === 'file') return (await import('./file.ts')).openFileState(spec.path, options);
  if (spec.kind === 'sqlite') return (await import('./sqlite.ts')).openSqliteState(spec.path, options, spec.takeIn);
  return (await import('./postgres.ts')).openPostgresState(spec.url, options);
}

/** A state URL's password is redacted by its value wherever it shows up (a driver's error, say). */
function rememberUrlPassword(url: URL): void {
  if (url.password === '') return;
  rememberSecret(url.password);
  try {
    rememberSecret(decodeURIComponent(url.password));
  } catch {
    // A malformed escape: the password as written is already remembered.
  }
}
