import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { hasErrno, processAlive } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import type { LockHolder } from './lock-holder.ts';

/**
 * A lock file next to the journal, so two runs never work from one state file at once
 * (both would submit the same new files). It names its holder; a holder that is dead on
 * this host is stale and its lock is taken over.
 */

export type Lock = { path: string; release(): Promise<void> };

export type LockDeps = { pid: number; host: string; isAlive: (pid: number) => boolean; now: () => number };

export const defaultLockDeps = (): LockDeps => ({
  pid: process.pid,
  host: hostname(),
  isAlive: processAlive,
  now: Date.now,
});

export function lockPathFor(journalPath: string): string {
  return `${journalPath}.lock`;
}

/** Looks at the lock this many times (a takeover by another run takes one or two). */
const ATTEMPTS = 20;

export async function acquireLock(journalPath: string, deps: LockDeps = defaultLockDeps()): Promise<Lock> {
  const path = lockPathFor(journalPath);
  const me: LockHolder = { pid: deps.pid, host: deps.host, started: new Date(deps.now()).toISOString() };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (createWhole(path, `${JSON.stringify(me)}\n`)) return { path, release: () => rm(path, { force: true }) };
    const seen = await readHolder(path);
    if (seen === 'gone') continue;
    const holder = seen.holder;
    if (holder && holder.host !== deps.host) {
      throw new ExtractError(
        'locked',
        `${journalPath} is in use by process ${holder.pid} on ${holder.host} since ${holder.started}: wait for it, use another --state file, or delete ${path} if that run is over`,
      );
    }
    if (holder && holder.pid !== deps.pid && deps.isAlive(holder.pid)) {
      throw new ExtractError(
        'locked',
        `${journalPath} is in use by process ${holder.pid} (started ${holder.started}): wait for it to finish, or use another --state file`,
      );
    }
    // Dead holder, our own pid, or an unreadable (torn) lock: stale, take it over.
    await removeIfStill(path, seen.text);
  }
  throw new ExtractError('locked', `could not take the lock ${path}: another run keeps taking it; try again`);
}

/**
 * Creates the lock file with its whole text, or returns false if one is there. The text goes to
 * a file of our own, then is linked to the lock's name (link fails if the name exists, at once):
 * another run never reads a lock that is not written yet, which it would take for a torn one.
 * On a file system without hard links, the name is created exclusively and then written.
 * Not fsync'd: what the lock guards against is another live process, which sees the page
 * cache; after a crash of the machine its holder is dead, and its lock is taken over anyway.
 */
function createWhole(path: string, text: string): boolean {
  const own = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(own, text, { flag: 'wx', mode: 0o600 });
    try {
      linkSync(own, path);
      return true;
    } catch (err) {
      if (hasErrno(err, 'EEXIST')) return false;
      if (!hasErrno(err, 'EPERM') && !hasErrno(err, 'ENOTSUP') && !hasErrno(err, 'ENOSYS')) throw err;
    } finally {
      rmSync(own, { force: true });
    }
    writeFileSync(path, text, { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if (hasErrno(err, 'EEXIST')) return false;
    throw err;
  }
}

/** A takeover guard older than this was left by a run that crashed within the microseconds it holds one. */
const GUARD_STALE_MS = 10_000;

/**
 * Removes a stale lock, if it is still the one judged stale, one run at a time. Two runs may
 * judge one stale lock at once; removing it by name, the slower would remove the lock the
 * faster had just made. So the removal happens under a guard file (made whole, as a lock is),
 * and only if the lock's text is still the text judged: a new lock always differs (its pid).
 * A run that finds the guard taken waits a moment and looks at the lock again.
 */
async function removeIfStill(path: string, judged: string): Promise<void> {
  const guard = `${path}.takeover`;
  if (!createWhole(guard, `${process.pid}\n`)) {
    // Against the file system's clock (the guard's mtime), not an injected one.
    const age = Date.now() - (statSync(guard, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > GUARD_STALE_MS) rmSync(guard, { force: true });
    else await new Promise((resolve) => setTimeout(resolve, 20));
    return;
  }
  try {
    if (lockText(path) === judged) rmSync(path, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

/** The lock file's text; undefined when there is none. */
function lockText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (hasErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
}

/**
 * The run holding the journal now, if any: a holder alive on this host, or any holder on
 * another (whose life this host cannot see). `extract status` asks, taking no lock.
 */
export async function liveHolder(
  journalPath: string,
  deps: Pick<LockDeps, 'host' | 'isAlive'> = defaultLockDeps(),
): Promise<LockHolder | undefined> {
  const seen = await readHolder(lockPathFor(journalPath));
  if (seen === 'gone' || seen.holder === undefined) return undefined;
  const holder = seen.holder;
  return holder.host !== deps.host || deps.isAlive(holder.pid) ? holder : undefined;
}

/** The lock's text and its holder (undefined when the text is not a holder: torn); 'gone' if there is none. */
async function readHolder(path: string): Promise<{ text: string; holder: LockHolder | undefined } | 'gone'> {
  const text = lockText(path);
  if (text === undefined) return 'gone';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { text, holder: undefined };
  }
  // The schema (and zod) load only here, when a lock file is already there: rarely.
  const { LockHolder } = await import('./lock-holder.ts');
  const parsed = LockHolder.safeParse(value);
  return { text, holder: parsed.success ? parsed.data : undefined };
}
