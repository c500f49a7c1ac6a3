import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Log } from '../../client/deps.ts';
import { errnoCode, hasErrno, isDiskFull, isSqliteBusy, processAlive } from '../../errno.ts';
import { ExtractError } from '../../errors.ts';
import { privateFolder, readOwn, writeDurably } from '../../private-files.ts';
import type { JournalFact } from '../journal.ts';
import { ClaimLostError, type Claim, type OpenStateOptions, type StateJournal } from './journal-state.ts';

/**
 * What the service has answered is never dropped because the journal cannot take it (a full
 * disk, a journal locked past --state-wait, a database gone). The first refused write stops the
 * run's submissions (a `sending` fact that cannot be written means the request is not sent, so
 * nothing more is charged), requests already in flight finish, and the facts they bring are kept
 * in memory. At the end the journal gets one more try; what it still refuses is written to a
 * rescue file, and the next run on that journal takes it back before it plans.
 *
 * Rescue files hold document ids and results: they live only in folders private to the user
 * (0700, owned by them, not a link), each file made new (O_EXCL, O_NOFOLLOW, 0600). First a
 * folder beside the journal; when that disk is the full one, a private folder of the user on
 * another file system ($XDG_RUNTIME_DIR, else the system's temporary folder).
 */

/** Where a journal's rescue files go, in the order tried, and where the next run looks. */
export type RescuePlaces = {
  /** The journal, as messages name it. */
  readonly journal: string;
  /** Private folders, each with the prefix of this journal's files in it. */
  readonly folders: ReadonlyArray<{ dir: string; prefix: string }>;
  /** An earlier version's rescue file (a fixed name in the temporary folder), read once if it is safe. */
  readonly legacy?: string | undefined;
};

/** `where`: the journal's path (file backends) or its redacted URL; `file`: whether it is a file. */
export function rescuePlacesFor(
  where: string,
  file: boolean,
  env: Record<string, string | undefined> = process.env,
): RescuePlaces {
  const id = createHash('sha256').update(where).digest('hex').slice(0, 16);
  const uid = process.getuid?.() ?? 0;
  const runtime = env.XDG_RUNTIME_DIR;
  // Every place a run may have written to is looked in, whatever this run's environment (cron has
  // no $XDG_RUNTIME_DIR where a login shell has one).
  return {
    journal: where,
    folders: [
      ...(file ? [{ dir: `${where}.rescue`, prefix: '' }] : []),
      ...(runtime?.startsWith('/') === true ? [{ dir: join(runtime, 'extract-rescue'), prefix: `${id}-` }] : []),
      { dir: join(tmpdir(), `extract-rescue-${uid}`), prefix: `${id}-` },
    ],
    legacy: file ? join(tmpdir(), `extract-rescue-${id}.jsonl`) : undefined,
  };
}

/** The journal refused a write: the run stops sending; what it learns is kept, then rescued. */
export class JournalWriteError extends ExtractError {
  constructor(journal: string, cause: unknown) {
    super(
      'state',
      `the journal ${journal} could not be written (${describeWriteError(cause)}): stopped sending, so nothing more is charged; ` +
        'requests already sent are finished and their answers kept (the journal gets them at the end, else a rescue file the next run takes back): ' +
        `${whatToDo(cause)}, then rerun the same command`,
      { cause },
    );
    this.name = 'JournalWriteError';
  }
}

/** The file system's or SQLite's error under a backend's message (sqlite-guard.ts wraps it). */
function rootCause(err: unknown): unknown {
  return err instanceof ExtractError && err.cause !== undefined ? err.cause : err;
}

function describeWriteError(err: unknown): string {
  const root = rootCause(err);
  if (errnoCode(root) === 'EDQUOT') return 'disk quota exceeded';
  if (isDiskFull(root)) return 'the disk is full';
  if (isSqliteBusy(root)) return 'another process holds it locked';
  if (err instanceof ExtractError) return err.message;
  return errnoCode(root) ?? (err instanceof Error ? err.message : String(err));
}

function whatToDo(err: unknown): string {
  const root = rootCause(err);
  if (isDiskFull(root)) return "free space on the journal's disk";
  if (isSqliteBusy(root)) return 'find the process that holds the journal (fuser, lsof) and let it finish';
  return 'check the journal and its folder';
}

/**
 * The journal as the run uses it, guarded: a refused write stops submissions (`onFailed`, once)
 * instead of abandoning the documents in flight; facts refused are kept and, at `close`, given to
 * the journal once more, else to a rescue file.
 */
export function rescuing(
  inner: StateJournal,
  places: RescuePlaces,
  log: Log,
  onFailed: (err: JournalWriteError) => void,
): StateJournal {
  const kept: JournalFact[] = [];
  let failure: JournalWriteError | undefined;
  const fail = (err: unknown): JournalWriteError => {
    if (failure === undefined) {
      failure = err instanceof JournalWriteError ? err : new JournalWriteError(inner.where, err);
      onFailed(failure);
    }
    return failure;
  };
  return {
    where: inner.where,
    shared: inner.shared,
    worker: inner.worker,
    replay: () => inner.replay(),
    view: () => inner.view(),
    history: () => inner.history(),
    lost: (key) => inner.lost(key),
    async append(fact) {
      if (failure === undefined) {
        try {
          await inner.append(fact);
          return;
        } catch (err) {
          if (err instanceof ClaimLostError) throw err;
          fail(err);
        }
      }
      // A request whose `sending` fact is not recorded is not sent: nothing is charged, nothing kept.
      if (fact.fact === 'sending') throw failure;
      kept.push(fact);
    },
    async claim(keys, max): Promise<Claim[]> {
      if (failure !== undefined) throw failure;
      try {
        return await inner.claim(keys, max);
      } catch (err) {
        if (err instanceof ClaimLostError) throw err;
        throw fail(err);
      }
    },
    // After a failure the journal is not waited for again until the end: its claims run out by themselves.
    release: (keys) => (failure === undefined ? inner.release(keys) : Promise.resolve()),
    holders: (keys) => (failure === undefined ? inner.holders(keys) : Promise.resolve(new Map())),
    async close() {
      try {
        if (kept.length > 0) await keepSafe(inner, kept, places, log);
      } finally {
        await inner.close();
      }
    },
  };
}

/**
 * Before a JSONL journal is read (its lock held): the facts earlier runs could not write,
 * appended to it as lines (takeBackRescued).
 */
export async function takeBackIntoFile(
  path: string,
  appendLine: (fact: JournalFact) => void,
  log: Log,
  env?: Record<string, string | undefined>,
): Promise<void> {
  const places = rescuePlacesFor(path, true, env);
  await takeBackRescued({ append: async (fact) => appendLine(fact) }, places, log);
}

/**
 * A journal a run writes to, as it opens: guarded so that a refused write stops the run without
 * losing an answer (rescuing), after taking back what earlier runs could not write
 * (takeBackRescued) unless `tookBack` (the JSONL file takes its rescue files back itself, under
 * its lock and before it reads its index). A journal that still refuses them is closed.
 */
export async function guardJournal(
  journal: StateJournal,
  where: { path: string; file: boolean; tookBack: boolean },
  options: Pick<OpenStateOptions, 'log' | 'env' | 'onWriteFailed'>,
): Promise<StateJournal> {
  const places = rescuePlacesFor(where.path, where.file, options.env);
  const guarded = rescuing(journal, places, options.log, (err) => options.onWriteFailed?.(err));
  if (where.tookBack) return guarded;
  try {
    await takeBackRescued(journal, places, options.log);
  } catch (err) {
    await journal.close().catch(() => undefined);
    throw err;
  }
  return guarded;
}

/** At the end of a run whose journal failed: the kept facts into the journal, else into a rescue file. */
async function keepSafe(
  journal: StateJournal,
  kept: readonly JournalFact[],
  places: RescuePlaces,
  log: Log,
): Promise<void> {
  const n = `${kept.length} fact${kept.length === 1 ? '' : 's'}`;
  try {
    await Promise.all(kept.map((fact) => journal.append(fact)));
    log('warn', `the journal ${places.journal} took the ${n} it had refused on a second try`);
    return;
  } catch {
    // Still refused: a rescue file, below.
  }
  const ids = [...new Set(kept.flatMap((f) => ('document_id' in f && f.document_id ? [f.document_id] : [])))];
  const charged =
    ids.length === 0
      ? 'no document was charged after the journal failed'
      : `the documents they record: ${ids.join(', ')} ("extract get <id>" fetches each)`;
  const text = kept.map((f) => `${JSON.stringify(f)}\n`).join('');
  const errors: string[] = [];
  for (const folder of places.folders) {
    try {
      const path = writeRescue(folder, text);
      log(
        'error',
        `the journal ${places.journal} could not take ${n}: they are kept in ${path}, which the next run on this journal takes back before it sends anything; ${charged}`,
      );
      return;
    } catch (err) {
      errors.push(`${folder.dir}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  log(
    'error',
    `the journal ${places.journal} could not take ${n}, nor could a rescue file (${errors.join('; ')}): ${charged}; a rerun would send these documents again, so rerun only after fetching them`,
  );
}

/** A new file in a private folder: made here (O_EXCL), never through a link, and synced. */
function writeRescue(folder: { dir: string; prefix: string }, text: string): string {
  privateFolder(folder.dir, true);
  const path = join(folder.dir, `${folder.prefix}${process.pid}-${randomBytes(6).toString('hex')}.jsonl`);
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeDurably(fd, text);
  } catch (err) {
    closeSync(fd);
    unlinkSync(path);
    throw err;
  }
  closeSync(fd);
  return path;
}

/**
 * The rescue files of a journal and their facts (what `extract status` shows, what a run takes
 * back). A rescue file that is not safely the user's (another owner, a link) is named and left
 * alone: its facts could be anyone's.
 */
export async function readRescued(
  places: RescuePlaces,
  log: Log,
): Promise<Array<{ path: string; facts: JournalFact[] }>> {
  const files: string[] = [];
  for (const { dir, prefix } of places.folders) {
    try {
      if (!privateFolder(dir, false)) continue;
      for (const name of readdirSync(dir)) {
        const taking = TAKING.exec(name);
        // A file another live run is taking back is its; one a killed run was taking is anyone's again.
        if (taking !== null && processAlive(Number(taking[1]))) continue;
        if (name.startsWith(prefix) && (name.endsWith('.jsonl') || taking !== null)) files.push(join(dir, name));
      }
    } catch (err) {
      log('warn', `rescue files in ${dir} were not read: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (places.legacy !== undefined) files.push(places.legacy);
  const out: Array<{ path: string; facts: JournalFact[] }> = [];
  for (const path of files.sort()) {
    let text: string;
    try {
      text = readOwn(path);
    } catch (err) {
      if (hasErrno(err, 'ENOENT')) continue;
      log('warn', `${path} was not taken back into the journal: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    const { parseJournal } = await import('../journal-read.ts');
    out.push({ path, facts: parseJournal(text, path).facts });
  }
  return out;
}

const TAKING = /\.jsonl\.taking-(\d+)$/;

/** The facts of a rescue file this run has taken (renamed to its own name): read with the same checks. */
async function readTaken(path: string): Promise<JournalFact[]> {
  const { parseJournal } = await import('../journal-read.ts');
  return parseJournal(readOwn(path), path).facts;
}

/**
 * Before a run plans: the facts earlier runs could not write go into the journal and their
 * rescue files are removed. A journal that still refuses them stops the run (exit 6) before
 * anything is sent, and the files stay.
 */
export async function takeBackRescued(
  journal: Pick<StateJournal, 'append'>,
  places: RescuePlaces,
  log: Log,
): Promise<void> {
  for (const { path: found } of await readRescued(places, log)) {
    // Taken by a rename first: of two runs that find the file (a shared SQLite journal), one takes it.
    const path = `${found.replace(TAKING, '.jsonl')}.taking-${process.pid}`;
    try {
      renameSync(found, path);
    } catch (err) {
      if (hasErrno(err, 'ENOENT')) continue;
      throw err;
    }
    const facts = await readTaken(path);
    try {
      for (const fact of facts) await journal.append(fact);
    } catch (err) {
      renameSync(path, found.replace(TAKING, '.jsonl'));
      throw new ExtractError(
        'state',
        `the journal ${places.journal} still cannot be written (${describeWriteError(err)}): ${whatToDo(err)}, then rerun the same command; ` +
          `an earlier run's facts wait in ${found} until then, and nothing is sent meanwhile`,
        { cause: err },
      );
    }
    unlinkSync(path);
    log(
      'info',
      `took back into the journal ${facts.length} fact${facts.length === 1 ? '' : 's'} an earlier run could not write (${path})`,
    );
  }
}
