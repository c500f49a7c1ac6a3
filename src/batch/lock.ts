import { writeFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { hasErrno } from '../errno.ts';
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
  isAlive: processIsAlive,
  now: Date.now,
});

export function lockPathFor(journalPath: string): string {
  return `${journalPath}.lock`;
}

export async function acquireLock(journalPath: string, deps: LockDeps = defaultLockDeps()): Promise<Lock> {
  const path = lockPathFor(journalPath);
  const me: LockHolder = { pid: deps.pid, host: deps.host, started: new Date(deps.now()).toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // Created only if absent (O_EXCL), written and closed in one call. Not fsync'd: what the
      // lock guards against is another live process, which sees the page cache; after a crash
      // of the machine its holder is dead, and a lost or torn lock file is taken over anyway.
      writeFileSync(path, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o600 });
      return { path, release: () => rm(path, { force: true }) };
    } catch (err) {
      if (!hasErrno(err, 'EEXIST')) throw err;
    }
    const holder = await readHolder(path);
    if (holder && holder.host !== deps.host) {
      throw new ExtractError(
        'usage',
        `${journalPath} is in use by process ${holder.pid} on ${holder.host} since ${holder.started}: wait for it, use another --state file, or delete ${path} if that run is over`,
      );
    }
    if (holder && holder.pid !== deps.pid && deps.isAlive(holder.pid)) {
      throw new ExtractError(
        'usage',
        `${journalPath} is in use by process ${holder.pid} (started ${holder.started}): wait for it to finish, or use another --state file`,
      );
    }
    // Dead holder, our own pid, or an unreadable (torn) lock: stale, take it over.
    await rm(path, { force: true });
  }
  throw new ExtractError('usage', `could not take the lock ${path}: another run keeps taking it; try again`);
}

async function readHolder(path: string): Promise<LockHolder | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
  // The schema (and zod) load only here, when a lock file is already there: rarely.
  const { LockHolder } = await import('./lock-holder.ts');
  const parsed = LockHolder.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return hasErrno(err, 'EPERM');
  }
}
