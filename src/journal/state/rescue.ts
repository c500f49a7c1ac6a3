import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Log } from '../../client/deps.ts';
import { errnoCode, hasErrno } from '../../errno.ts';
import { ExtractError } from '../../errors.ts';
import type { JournalFact, WriteBytes } from '../journal.ts';

/**
 * When the journal file cannot be written (a full disk, an I/O error), what the run learns
 * after that is not lost: the run stops sending (the `sending` fact before each extract
 * request cannot be written, so no request goes out), the facts of documents already charged
 * are kept in memory, tried once more at the end, and otherwise written to a rescue file in
 * the system's temporary directory (most likely another filesystem), named after the journal.
 * The next run on that journal appends the rescue file to the journal before it plans, then
 * removes it: the documents charged are known, and not paid for again.
 */

/** The rescue file of a journal: a fixed name derived from the journal's path. */
export function rescuePathFor(journal: string, dir = tmpdir()): string {
  return join(dir, `extract-rescue-${createHash('sha256').update(journal).digest('hex').slice(0, 16)}.jsonl`);
}

/** The journal refused a write: the run stops sending; what it learns goes to the rescue file. */
export class JournalWriteError extends ExtractError {
  constructor(journal: string, cause: unknown) {
    super(
      'state',
      `the journal ${journal} could not be written (${describeWriteError(cause)}): stopped sending, so nothing more is charged; ` +
        `what this run learned goes back into the journal on the next run (it waits in ${rescuePathFor(journal)} until then): ` +
        'free space on its disk, then rerun the same command',
      { cause },
    );
    this.name = 'JournalWriteError';
  }
}

function describeWriteError(err: unknown): string {
  const code = errnoCode(err);
  if (code === 'ENOSPC') return 'ENOSPC: no space left on the device';
  if (code === 'EDQUOT') return 'EDQUOT: disk quota exceeded';
  return code ?? (err instanceof Error ? err.message : String(err));
}

/** Appends `text` to `path` and syncs it: the whole of it is on disk when this returns. */
function appendDurably(path: string, text: string, write: WriteBytes = writeSync): void {
  const fd = openSync(path, 'a', 0o600);
  try {
    const bytes = Buffer.from(text, 'utf8');
    for (let at = 0; at < bytes.length; ) at += write(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The facts a journal could not take, and the first failure. */
export type Rescue = {
  readonly failure: JournalWriteError | undefined;
  /** Records the failure; true the first time. */
  fail(err: unknown): boolean;
  keep(fact: JournalFact): void;
  /** At the end of the run: the kept facts into the journal, else into the rescue file; says where, and what was charged. */
  flush(): void;
};

/** `write`: how the journal's bytes are written (the rescue file is written with fs.writeSync). */
export function rescuer(journal: string, log: Log, write: WriteBytes = writeSync): Rescue {
  const kept: JournalFact[] = [];
  let failure: JournalWriteError | undefined;
  return {
    get failure() {
      return failure;
    },
    fail(err) {
      if (failure !== undefined) return false;
      failure = new JournalWriteError(journal, err);
      return true;
    },
    keep: (fact) => kept.push(fact),
    flush() {
      if (kept.length === 0) return;
      // A torn line may end the journal: the kept facts start on a line of their own.
      const text = kept.map((f) => `${JSON.stringify(f)}\n`).join('');
      const n = `${kept.length} fact${kept.length === 1 ? '' : 's'}`;
      try {
        appendDurably(journal, `\n${text}`, write);
        log('warn', `the journal ${journal} took the ${n} it had refused on a second try`);
        return;
      } catch {
        // Still full: the rescue file, below.
      }
      const ids = [
        ...new Set(kept.flatMap((f) => ('document_id' in f && f.document_id !== null ? [f.document_id] : []))),
      ];
      const charged =
        ids.length === 0
          ? 'no document was charged after the journal failed'
          : `documents charged that only the rescue knows: ${ids.join(', ')} ("extract get <id>" fetches each)`;
      const rescue = rescuePathFor(journal);
      try {
        appendDurably(rescue, text);
        log(
          'error',
          `the journal ${journal} could not take ${n}: they are kept in ${rescue}, which the next run takes back into the journal; ${charged}; free space on the journal's disk, then rerun the same command`,
        );
      } catch (err) {
        log(
          'error',
          `the journal ${journal} could not take ${n}, nor could ${rescue} (${describeWriteError(err)}): ${charged}; a rerun would send these documents again`,
        );
      }
    },
  };
}

/**
 * Before a run plans: the facts an earlier run could not write, appended to the journal and
 * their rescue file removed. A journal that still cannot take them stops the run (exit 6)
 * before anything is sent, and the rescue file stays.
 */
export function takeBackRescued(journal: string, log: Log): void {
  const rescue = rescuePathFor(journal);
  let text: string;
  try {
    text = readFileSync(rescue, 'utf8');
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) return;
    throw err;
  }
  if (text !== '') {
    try {
      appendDurably(journal, `\n${text}`);
    } catch (err) {
      throw new ExtractError(
        'state',
        `the journal ${journal} still cannot be written (${describeWriteError(err)}): free space on its disk, then rerun the same command; ` +
          `an earlier run's facts wait in ${rescue} until then, and nothing is sent meanwhile`,
        { cause: err },
      );
    }
  }
  unlinkSync(rescue);
  const lines = text.split('\n').filter((l) => l !== '').length;
  log(
    'info',
    `took back into the journal ${lines} fact${lines === 1 ? '' : 's'} an earlier run could not write (${rescue})`,
  );
}
