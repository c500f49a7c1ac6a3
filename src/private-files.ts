import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import { hasErrno } from './errno.ts';
import { ExtractError } from './errors.ts';

/**
 * Files that hold secrets or other people's documents (tokens, the emulator's and the inbox's
 * databases, rescue files, the config store) live in folders only their user can enter, are
 * made here (O_EXCL) and never opened through a link (O_NOFOLLOW), mode 0600. What is read back
 * must be a regular file of this user: on a shared machine another user may plant a link or a
 * file of their own where we expect ours (a token they know, results they want us to take in).
 */

const uid = (): number | undefined => process.getuid?.();

/** Why `st` is not this user's own, or undefined when it is. `closed`: nobody else may read it either. */
function _notOwn(st: Stats, kind: 'file' | 'folder', closed: boolean): string | undefined {
  if (st.isSymbolicLink()) return 'is a link';
  if (kind === 'file' ? !st.isFile() : !st.isDirectory()) return `is not a ${kind}`;
  const me = uid();
  // Without POSIX users (Windows) there is no owner or mode to check; the link rule still holds.
  if (me === undefined) return undefined;
  if (st.uid !== me) return `belongs to another user (uid ${st.uid})`;
  if ((st.mode & (closed ? 0o077 : 0o022)) !== 0)
    return `is open to other users (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

/**
 * A note when a file of secrets the user gave (a password file, a header file) can be read by
 * other users of the machine, as ssh says of a key: said, not refused, since it may be shared on
 * purpose. Nothing when it is closed, missing (its reader says so) or without POSIX modes.
 */
export function readableByOthersNote(path: string, what: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return undefined;
  }
  if (process.platform === 'win32' || (mode & 0o044) === 0) return undefined;
  return `note: ${what} ${path} can be read by other users of this machine (mode ${(mode & 0o777).toString(8)}): chmod 600 ${path}`;
}

/**
 * A folder only this user can enter: made 0700 when missing; one that is a link, belongs to
 * someone else or lets others in is refused with an Error (another user could read or plant
 * files in it). False when it does not exist and `make` is not asked.
 */
export function privateFolder(dir: string, make: boolean): boolean {
  if (make) mkdirSync(dir, { recursive: true, mode: 0o700 });
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch (err) {
    if (!make && hasErrno(err, 'ENOENT')) return false;
    throw err;
  }
  const why = _notOwn(st, 'folder', true);
  if (why !== undefined) throw new Error(`${dir} is not a private folder of this user: it ${why}`);
  return true;
}

/**
 * A folder of extract's own that the user named (a data directory, the config store's folder):
 * made 0700 when missing; one of this user that others may enter is closed (0700: earlier
 * versions made it with the umask's mode); a link or another user's folder is refused, with
 * `todo` saying what to do instead. Without `make`, a missing folder is left to its writer.
 */
export function ownFolder(dir: string, todo: string, make = true): void {
  try {
    if (make) mkdirSync(dir, { recursive: true, mode: 0o700 });
    let st: Stats;
    try {
      st = lstatSync(dir);
    } catch (err) {
      if (!make && hasErrno(err, 'ENOENT')) return;
      throw err;
    }
    const why = _notOwn(st, 'folder', false) ?? _notOwn(st, 'folder', true);
    if (why?.startsWith('is open to') === true) chmodSync(dir, 0o700);
    else if (why !== undefined) throw new ExtractError('usage', `${dir} ${why}, not a folder of this user: ${todo}`);
  } catch (err) {
    if (err instanceof ExtractError) throw err;
    throw new ExtractError(
      'usage',
      `cannot use ${dir} (${err instanceof Error ? err.message : String(err)}): check its permissions, or ${todo}`,
      { cause: err },
    );
  }
}

/**
 * A private file's text, if it is a regular file of this user, opened without following a link.
 * `closed`: one others may read is refused too (a secret); else only one others may write.
 * Errors are plain (ENOENT passes through, so a caller can tell "none yet").
 */
export function readOwn(path: string, closed = false): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const why = _notOwn(fstatSync(fd), 'file', closed);
    if (why !== undefined) throw new Error(`${path} is not a private file of this user: it ${why}`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** The errno an open with O_NOFOLLOW gives for a link, which Linux and macOS spell differently. */
export function isLinkRefused(err: unknown): boolean {
  return hasErrno(err, 'ELOOP') || hasErrno(err, 'EMLINK') || hasErrno(err, 'EFTYPE');
}

/**
 * Readies a SQLite database file before SQLite opens it: made here 0600 (O_EXCL, so SQLite gives
 * its -wal and -shm files the same mode), or, when it exists, checked to be this user's regular
 * file and closed to others (earlier versions made it 0644); its -wal and -shm files the same.
 * Anything else (a link, another user's file) is refused with `todo` saying what to do.
 */
export function privateDatabase(path: string, todo: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
    return;
  } catch (err) {
    if (!hasErrno(err, 'EEXIST')) throw _refused(path, err, todo);
  }
  ownFile(path, todo);
  for (const file of [`${path}-wal`, `${path}-shm`]) ownFile(file, todo, true);
}

/**
 * An existing file of this user, checked without following a link: another user's file or a
 * link is refused with `todo` saying what to do; one others may read is closed (0600: earlier
 * versions made some with the umask's mode). `mayBeMissing`: a missing file is fine.
 */
export function ownFile(path: string, todo: string, mayBeMissing = false): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if (mayBeMissing && hasErrno(err, 'ENOENT')) return;
    throw _refused(path, err, todo);
  }
  try {
    const st = fstatSync(fd);
    const why = _notOwn(st, 'file', false);
    if (why !== undefined) throw new ExtractError('usage', `${path} ${why}, not a file of this user: ${todo}`);
    if ((st.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

function _refused(path: string, err: unknown, todo: string): ExtractError {
  if (err instanceof ExtractError) return err;
  if (isLinkRefused(err)) return new ExtractError('usage', `${path} is a link, not a file of this user: ${todo}`);
  return new ExtractError(
    'usage',
    `cannot open ${path} (${err instanceof Error ? err.message : String(err)}): check its permissions, or ${todo}`,
    { cause: err },
  );
}

/** All of `text` written at the descriptor (one writeSync may write less than asked) and flushed to disk. */
export function writeDurably(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
  fsyncSync(fd);
}
