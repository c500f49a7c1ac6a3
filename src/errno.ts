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
