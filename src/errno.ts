/**
 * The one reading of Node's error codes (`ENOENT`, `ECONNREFUSED`, undici's `UND_ERR_*`).
 * Decisions are made on these codes, never on message text. undici wraps the socket's
 * error in `cause`, so the chain is followed a few levels down.
 */
export function errnoCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code: unknown = Reflect.get(e, 'code');
    if (typeof code === 'string') return code;
    e = Reflect.get(e, 'cause');
  }
  return undefined;
}

/** True when `err` carries the code `code` (directly or in its cause chain). */
export function hasErrno(err: unknown, code: string): boolean {
  return errnoCode(err) === code;
}

/**
 * node:sqlite's result code (`errcode` of an `ERR_SQLITE_ERROR`), its primary part: an extended
 * code such as SQLITE_BUSY_RECOVERY (261) reads as SQLITE_BUSY (5).
 */
export function sqliteCode(err: unknown): number | undefined {
  if (errnoCode(err) !== 'ERR_SQLITE_ERROR' || typeof err !== 'object' || err === null) return undefined;
  const code: unknown = Reflect.get(err, 'errcode');
  return typeof code === 'number' ? code & 0xff : undefined;
}

/** SQLite's result codes the project acts on (sqlite.org/rescode.html). */
export const SQLITE = { BUSY: 5, LOCKED: 6, FULL: 13 } as const;

/** Another connection holds the database (SQLITE_BUSY or SQLITE_LOCKED). */
export function isSqliteBusy(err: unknown): boolean {
  const code = sqliteCode(err);
  return code === SQLITE.BUSY || code === SQLITE.LOCKED;
}

/** The disk is full: ENOSPC or EDQUOT from the file system, SQLITE_FULL from node:sqlite. */
export function isDiskFull(err: unknown): boolean {
  const code = errnoCode(err);
  return code === 'ENOSPC' || code === 'EDQUOT' || sqliteCode(err) === SQLITE.FULL;
}

/** Whether a process of this machine lives: signal 0 asks without sending (EPERM: another user's, alive). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) !== 'ESRCH';
  }
}

/** A file system error as a person reads it: permission denied, no such file, or its code. */
export function describeFsError(err: unknown): string {
  const code = errnoCode(err);
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOENT') return 'no such file';
  return code ?? (err instanceof Error ? err.message : String(err));
}
