import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureToken, TOKEN_FILE } from '../../src/receiver/token.ts';
import { tempDir } from '../helpers/cli.ts';

describe('ensureToken: the token listen makes when given no credentials', () => {
  it('is made once, then read back the same; an empty file or an unwritable directory is a usage error that says what to do', () => {
    const dir = join(tempDir(), 'inbox');
    const made = ensureToken(dir);
    expect(made.created).toBe(true);
    const again = ensureToken(dir);
    expect(again).toEqual({ ...made, created: false });

    const empty = tempDir();
    writeFileSync(join(empty, TOKEN_FILE), '\n', { mode: 0o600 });
    expect(() => ensureToken(empty)).toThrow(/is empty: delete it to have a new token made/);

    // A data directory that cannot be made (a file is in the way): a message, not a stack trace.
    const blocked = tempDir();
    writeFileSync(join(blocked, 'file'), 'x');
    expect(() => ensureToken(join(blocked, 'file', 'inbox'))).toThrow(
      /cannot use .*check its permissions, or pass a --data-dir of your own/,
    );
  });
});
