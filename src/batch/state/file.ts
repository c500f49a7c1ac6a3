import { readFile } from 'node:fs/promises';
import { openJournal, parseJournal, replayer, type JournalWriter, type Replay } from '../journal.ts';
import { acquireLock, type Lock } from '../lock.ts';
import type { Claim, OpenStateOptions, StateJournal } from './index.ts';
import { hasErrno } from '../../errno.ts';

/**
 * The JSONL file backend: the lock file makes this process the journal's only worker, so
 * every claim is granted at once and nothing is ever taken over. What it knows of each
 * document is the replay plus the facts this run appended.
 */
export async function openFileState(path: string, options: OpenStateOptions): Promise<StateJournal> {
  const lock: Lock | undefined = options.readOnly ? undefined : await acquireLock(path, options.lock);
  try {
    const { facts, skipped, torn } = parseJournal(await readText(path));
    // One replay from the file's first fact on, continued by this run's own facts.
    const live = replayer();
    for (const fact of facts) live.apply(fact);
    const replay: Replay = { known: new Map(live.known), skipped, torn };
    const known = live.known;
    const writer: JournalWriter | undefined = options.readOnly ? undefined : await openJournal(path, torn);
    return {
      where: path,
      shared: false,
      worker: 'local',
      replay: async () => replay,
      append: async (fact) => {
        if (!writer) throw new Error(`the journal ${path} was opened read-only`);
        await writer.append(fact);
        live.apply(fact);
      },
      claim: async (keys, max) =>
        keys.slice(0, max).map((key): Claim => ({ key, known: known.get(key), concurrent: false, takenFrom: null })),
      release: async () => {},
      lost: () => false,
      holders: async () => new Map(),
      history: async () => {
        const { facts, skipped } = parseJournal(await readText(path));
        return { facts: facts.map((fact) => ({ fact, worker: null })), workers: [], skipped };
      },
      close: async () => {
        try {
          await writer?.close();
        } finally {
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
