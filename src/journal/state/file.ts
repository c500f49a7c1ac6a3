import { readFile } from 'node:fs/promises';
import { openJournal, type JournalFact, type JournalWriter, type WriteBytes } from '../journal.ts';
import { acquireLock, type Lock } from '../lock.ts';
import type { Claim, OpenStateOptions, StateJournal } from './journal-state.ts';
import { hasErrno } from '../../errno.ts';
import type { Log } from '../../client/deps.ts';
import { openIndexed, type IndexedJournal } from './journal-index.ts';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { takeBackIntoFile } from './rescue.ts';

/**
 * The JSONL file backend: the lock file makes this process the journal's only worker, so
 * every claim is granted at once and nothing is ever taken over. What it knows of each
 * document is the replay plus the facts this run appended.
 */
export async function openFileState(path: string, options: OpenStateOptions): Promise<StateJournal> {
  const lock: Lock | undefined = options.readOnly ? undefined : await acquireLock(path, options.lock);
  try {
    // What earlier runs could not write (rescue.ts) is the journal's before its index is read.
    if (!options.readOnly)
      await takeBackIntoFile(path, (fact) => appendLine(path, fact, options.write), options.log, options.env);
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
        try {
          // After a failed write the writer is broken (its file may end in a torn line): a fact
          // given again later (rescue.ts) goes on a line of its own, through a descriptor of its own.
          if (appendFailed) appendLine(path, fact, options.write);
          else await writer.append(fact);
        } catch (err) {
          appendFailed = true;
          throw err;
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

/** One fact on a line of its own (a torn line may end the file), synced before this returns. */
export function appendLine(path: string, fact: JournalFact, write: WriteBytes = writeSync): void {
  const fd = openSync(path, 'a', 0o600);
  try {
    const bytes = Buffer.from(`\n${JSON.stringify(fact)}\n`, 'utf8');
    for (let at = 0; at < bytes.length; ) at += write(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
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
