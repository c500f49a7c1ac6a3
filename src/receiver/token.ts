import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { hasErrno } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { isLinkRefused, ownFolder, readOwn } from '../private-files.ts';

/**
 * The bearer token `extract listen` uses when it is given no credentials and no explicit
 * `--auth none`: made once, kept in the data directory (mode 0600) so a restart keeps it and the
 * senders configured with it keep working. `created` says whether it was made now, the one time
 * the CLI prints it.
 *
 * Whoever wrote the token file decides who may post: one that is a link, another user's, or
 * readable by others is refused, never used (a data directory others can write into could hold
 * a token they planted).
 */
export const TOKEN_FILE = 'listen-token';

const TODO = 'delete it to have a new token made, or pass a token (EXTRACT_LISTEN_TOKEN)';

export function ensureToken(dataDir: string): { token: string; path: string; created: boolean } {
  const path = join(dataDir, TOKEN_FILE);
  ownFolder(dataDir, 'pass a --data-dir of your own, or a token (EXTRACT_LISTEN_TOKEN)');
  const token = randomBytes(32).toString('base64url');
  try {
    // O_EXCL: never overwrites a token made by an earlier run (or a concurrent one), nor goes through a link.
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, `${token}\n`);
    } finally {
      closeSync(fd);
    }
    return { token, path, created: true };
  } catch (err) {
    if (!hasErrno(err, 'EEXIST')) throw _cannot(path, err);
  }
  let kept: string;
  try {
    kept = readOwn(path, true).trim();
  } catch (err) {
    if (isLinkRefused(err))
      throw new ExtractError('usage', `${path} is a link, not the token file listen made: ${TODO}`);
    if (err instanceof Error && /not a private file/.test(err.message))
      throw new ExtractError('usage', `${err.message}, so anyone may have written it: ${TODO}`);
    throw _cannot(path, err);
  }
  if (kept === '')
    throw new ExtractError(
      'usage',
      `${path} is empty: delete it to have a new token made, or pass a token (EXTRACT_LISTEN_TOKEN) or --auth none`,
    );
  return { token: kept, path, created: false };
}

function _cannot(path: string, err: unknown): ExtractError {
  return new ExtractError(
    'usage',
    `cannot keep the listen token in ${path} (${err instanceof Error ? err.message : String(err)}): check the --data-dir permissions, or pass a token (EXTRACT_LISTEN_TOKEN)`,
    { cause: err },
  );
}
