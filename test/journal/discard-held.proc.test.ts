import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, onTestFinished } from 'vitest';
import { openRunJournal } from '../../src/journal/run-journal.ts';
import { userJournalPath } from '../../src/journal/state/user-journal.ts';
import { tempDir } from '../helpers/cli.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * A run whose service never answered removes the user's journal it made, but not while another
 * process holds it open: a second run started at the same moment may not have written yet.
 */

const BASE = 'http://127.0.0.1:9/';

describe('a journal made by a run whose service never answered', () => {
  it('is kept while another process holds it open, and removed once none does', async () => {
    const cwd = tempDir('extract-discard-held-');
    const env = { XDG_STATE_HOME: join(cwd, '.state') };
    const deps = { cwd, env, log: () => {}, opened: () => {}, writeFailed: () => {} };
    const options = { state: undefined, baseUrl: BASE, dryRun: false, fresh: false, lease: 30_000, stateWait: 1_000 };
    const run = await openRunJournal(options, deps);
    await run.journal.close();
    const journal = userJournalPath(env, BASE);

    // Another run's connection: node:sqlite opened for writing, held until killed.
    const other = spawn(
      process.execPath,
      [
        '-e',
        "const { DatabaseSync } = require('node:sqlite'); const db = new DatabaseSync(process.argv[1]); db.prepare('SELECT 1').get(); console.log('open'); setInterval(() => {}, 1000);",
        journal,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    onTestFinished(() => {
      other.kill('SIGKILL');
    });
    const [first] = (await once(other.stdout, 'data')) as [Buffer];
    expect(first.toString()).toContain('open');

    await run.discardMade();
    expect(existsSync(journal)).toBe(true);

    other.kill('SIGKILL');
    await once(other, 'exit');
    await run.discardMade();
    expect(existsSync(journal)).toBe(false);
  });
});
