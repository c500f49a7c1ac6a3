import { renameSync } from 'node:fs';
import type { Log } from '../client/deps.ts';
import { knownFromMap, type JournalView, type KnownLookup } from './journal.ts';
import type { SqliteState } from './state/sqlite-state.ts';

/**
 * The journals of earlier versions (state/user-journal.ts earlierJournals: the user's JSON Lines
 * journal of 0.1, a folder's `.extract-state.jsonl`): a run that writes takes each into the
 * user's SQLite journal once, as it opens (takeInEarlier); a dry run writes nothing, so it reads
 * them behind the journal's own answers (readBehind). Either way nothing they knew is paid again.
 */

/**
 * Takes every fact of each earlier journal into `journal`, then retires the old file under
 * another name (kept for a downgrade, and not taken in again). Its facts are validated as any
 * journal's (a fact too new stops the run before anything is imported); the import is keyed by
 * the file, so a run stopped between the import and the rename takes nothing twice.
 */
export async function takeInEarlier(
  journal: Pick<SqliteState, 'importFacts' | 'where'>,
  paths: readonly string[],
  log: Log,
): Promise<void> {
  const { readFile } = await import('node:fs/promises');
  const { parseJournal } = await import('./journal-read.ts');
  for (const path of paths) {
    const { facts } = parseJournal(await readFile(path, 'utf8'), path);
    const taken = await journal.importFacts(facts, path);
    const keptAs = `${path}.imported`;
    renameSync(path, keptAs);
    log(
      'info',
      `imported the ${taken} facts of ${path} into ${journal.where}, the journal every folder now shares; the old file is kept as ${keptAs}`,
    );
  }
}

/** What a dry run starts from: the journal's answers, then (for what it does not know) each earlier journal's. */
export async function readBehind(view: JournalView, paths: readonly string[]): Promise<JournalView> {
  if (paths.length === 0) return view;
  const { readJournal } = await import('./journal-read.ts');
  const olds = await Promise.all(paths.map((path) => readJournal(path)));
  const parsers = new Map(view.parsers);
  for (const old of olds) for (const [key, fact] of old.parsers) if (!parsers.has(key)) parsers.set(key, fact);
  const all: KnownLookup[] = [view.known, ...olds.map((old) => knownFromMap(old.known))];
  const known: KnownLookup = {
    get: (key) => {
      for (const lookup of all) {
        const fact = lookup.get(key);
        if (fact !== undefined) return fact;
      }
      return undefined;
    },
    names: (file) => all.some((lookup) => lookup.names(file)),
    targets: () => new Set(all.flatMap((lookup) => [...lookup.targets()])),
  };
  return { ...view, known, parsers };
}
