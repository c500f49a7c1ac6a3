import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasErrno } from '../errno.ts';
import { ExtractError } from '../errors.ts';

/**
 * The bearer token `extract listen` uses when it is given no credentials and no explicit
 * `--auth none`: made once, kept in the data directory (mode 0600) so a restart keeps it and the
 * senders configured with it keep working. `created` says whether it was made now, the one time
 * the CLI prints it.
 */
export const TOKEN_FILE = 'listen-token';

export function ensureToken(dataDir: string): { token: string; path: string; created: boolean } {
  const path = join(dataDir, TOKEN_FILE);
  try {
    mkdirSync(dataDir, { recursive: true });
    const token = randomBytes(32).toString('base64url');
    // 'wx': never overwrites a token made by an earlier run (or a concurrent one).
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return { token, path, created: true };
  } catch (err) {
    if (!hasErrno(err, 'EEXIST')) throw _cannot(path, err);
  }
  let token: string;
  try {
    token = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw _cannot(path, err);
  }
  if (token === '')
    throw new ExtractError(
      'usage',
      `${path} is empty: delete it to have a new token made, or pass a token (EXTRACT_LISTEN_TOKEN) or --auth none`,
    );
  return { token, path, created: false };
}

function _cannot(path: string, err: unknown): ExtractError {
  return new ExtractError(
    'usage',
    `cannot keep the listen token in ${path} (${err instanceof Error ? err.message : String(err)}): check the --data-dir permissions, or pass a token (EXTRACT_LISTEN_TOKEN)`,
    { cause: err },
  );
}
