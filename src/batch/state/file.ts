import { readFile } from 'node:fs/promises';
import { applyFact, openJournal, parseJournal, readJournal, type JournalWriter } from '../journal.ts';
import { acquireLock, type Lock } from '../lock.ts';
import type { Claim, OpenStateOptions, StateJournal } from './index.ts';

/**
 * The JSONL file backend: the lock file makes this process the journal's only worker, so
 * every claim is granted at once and nothing is ever taken over. What it knows of each
 * document is the replay plus the facts this run appended.
 */
export async function openFileState(path: string, options: OpenStateOptions): Promise<StateJournal> {
  const lock: Lock | undefined = options.readOnly ? undefined : await acquireLock(path, options.lock);
  try {
    const replay = await readJournal(path);
    const known = new Map(replay.known);
    const writer: JournalWriter | undefined = options.readOnly ? undefined : await openJournal(path, replay.torn);
    return {
      where: path,
      shared: false,
      worker: 'local',
      replay: async () => replay,
      append: async (fact) => {
        if (!writer) throw new Error(`the journal ${path} was opened read-only`);
        await writer.append(fact);
        applyFact(known, fact);
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
    if (typeof err === 'object' && err !== null && Reflect.get(err, 'code') === 'ENOENT') return '';
    throw err;
  }
}
