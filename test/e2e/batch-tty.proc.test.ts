import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv, tempDir } from '../helpers/cli.ts';

/**
 * The terminal path: the CLI runs under script(1), which gives it a real pseudo-terminal,
 * so ora's spinner and cli-progress's bar draw as they do for a person. Three invoices: the bar
 * and the zero-width fallback show on the first document as on the ninth (a bar forced on a
 * zero-width terminal still never stops clearing; plain lines forced still draw no bar).
 */
async function underTerminal(setup: string) {
  const dir = tempDir();
  const log = join(dir, 'terminal.log');
  const command = `${setup}'${process.execPath}' '${CLI}' --local 'fixtures/invoices/0[1-3]*.pdf' -o '${join(dir, 'out.csv')}'`;
  const run = await execa('script', ['-qec', command, log], {
    env: cleanEnv({ TERM: 'xterm-256color' }),
    extendEnv: false,
    reject: false,
    timeout: 120_000,
    cwd: join(import.meta.dirname, '..', '..'),
  });
  return { run, screen: readFileSync(log, 'utf8') };
}

describe('batch: on a terminal', () => {
  it('draws a progress bar and ends with the summary', async () => {
    const { run, screen } = await underTerminal('stty cols 100 rows 30; ');
    expect(run.exitCode, screen).toBe(0);
    expect(screen).toMatch(/\d+\/\d+ documents \| \d+ pages \| 0 failed/);
    expect(screen).toMatch(/extract: 3 completed, 0 failed/);
  });

  it('a terminal of zero width gets plain lines instead of a bar that never stops clearing', async () => {
    const { run, screen } = await underTerminal('stty cols 0 rows 0; ');
    expect(run.timedOut).toBe(false);
    expect(run.exitCode, screen.slice(0, 2000)).toBe(0);
    expect(screen.length).toBeLessThan(20_000);
    expect(screen).toMatch(/info {2}\[3\/3\]/);
  });
});
