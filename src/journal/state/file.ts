import { readFile } from 'node:fs/promises';
import { openJournal, type JournalWriter } from '../journal.ts';
import { acquireLock, type Lock } from '../lock.ts';
import type { Claim, OpenStateOptions, StateJournal } from './journal-state.ts';
import { hasErrno } from '../../errno.ts';
import type { Log } from '../../client/deps.ts';
import { openIndexed, type IndexedJournal } from './journal-index.ts';
import { rescuer, takeBackRescued } from './rescue.ts';

/**
 * The JSONL file backend: the lock file makes this process the journal's only worker, so
 * every claim is granted at once and nothing is ever taken over. What it knows of each
 * document is the replay plus the facts this run appended.
 */
export async function openFileState(path: string, options: OpenStateOptions): Promise<StateJournal> {
  const lock: Lock | undefined = options.readOnly ? undefined : await acquireLock(path, options.lock);
  try {
    // What an earlier run could not write (a full disk) is the journal's before anything is planned.
    if (!options.readOnly) takeBackRescued(path, options.log);
    // The index (a cache of the replay, looked up per document) when it matches the journal; else
    // the whole journal, once. Only journal text is validated (journal-facts.ts, imported for it):
    // a current index loads no zod.
    const indexed = await openIndexed(
      path,
      async () => (await import('../journal-read.ts')).parseJournal,
      options.readOnly,
    );
    const { skipped, torn } = indexed;
    const writer: JournalWriter | undefined = options.readOnly
      ? undefined
      : await openJournal(path, torn, options.write);
    const rescue = rescuer(path, options.log, options.write);
    // Saved at close when this run wrote facts or the index was missing or behind; never after a failed append.
    let appendFailed = false;
    return {
      where: path,
      shared: false,
      worker: 'local',
      // The replay as it was at the start, whole (status and tests; a run uses the view).
      replay: async () => {
        const state = indexed.materialize();
        return { known: state.known, parsers: state.parsers, skipped, torn };
      },
      view: async () => ({ known: indexed.known, parsers: indexed.parsers, skipped, torn }),
      append: async (fact) => {
        if (!writer) throw new Error(`the journal ${path} was opened read-only`);
        if (rescue.failure === undefined) {
          try {
            await writer.append(fact);
          } catch (err) {
            appendFailed = true;
            if (rescue.fail(err) && rescue.failure) options.onWriteFailed?.(rescue.failure);
          }
        }
        if (rescue.failure !== undefined) {
          // A request whose `sending` fact is not on disk is not sent: nothing is charged, nothing kept.
          if (fact.fact === 'sending') throw rescue.failure;
          rescue.keep(fact);
        }
        indexed.apply(fact);
      },
      claim: async (keys, max) =>
        keys
          .slice(0, max)
          .map((key): Claim => ({ key, known: indexed.live.get(key), concurrent: false, takenFrom: null })),
      release: async () => {},
      lost: () => false,
      holders: async () => new Map(),
      history: async () => {
        const { parseJournal } = await import('../journal-read.ts');
        const { facts, skipped } = parseJournal(await readText(path), path);
        return { facts: facts.map((fact) => ({ fact, worker: null })), workers: [], skipped };
      },
      close: async () => {
        try {
          await writer?.close();
          rescue.flush();
          if (writer && indexed.behind() && !appendFailed) saveIndexQuietly(path, indexed, options.log);
        } finally {
          indexed.close();
          await lock?.release();
        }
      },
    };
  } catch (err) {
    await lock?.release();
    throw err;
  }
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) return '';
    throw err;
  }
}

/** The index is a cache: failing to write it costs the next run a full replay, not this run its result. */
function saveIndexQuietly(path: string, indexed: IndexedJournal, log: Log): void {
  try {
    indexed.save();
  } catch (err) {
    log(
      'debug',
      `${path}: the journal index was not saved (${err instanceof Error ? err.message : String(err)}); the next run replays the journal`,
    );
  }
}
