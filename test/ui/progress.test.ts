import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createReporter, eta } from '../../src/ui/progress.ts';

async function linesOf(color: boolean): Promise<string> {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const reporter = await createReporter({
    stderr,
    style: 'plain',
    verbosity: 'verbose',
    color: color ? 1 : 0,
    now: () => 0,
  });
  reporter.log('error', 'it failed');
  reporter.log('warn', 'it may have cost');
  reporter.log('debug', 'a detail');
  reporter.log('info', 'a fact');
  reporter.stop();
  return text;
}

describe('progress', () => {
  it('progress: with colours, error, warn and debug tags are red, yellow and dim (chalk, loaded for them)', async () => {
    const text = await linesOf(true);
    expect(text).toContain('\u001b[31merror\u001b[39m it failed');
    expect(text).toContain('\u001b[33mwarn \u001b[39m it may have cost');
    expect(text).toContain('\u001b[2mdebug\u001b[22m a detail');
    expect(text).toContain('info  a fact');
  });

  it('progress: without colours, the same lines carry no escape sequence', async () => {
    const text = await linesOf(false);
    expect(text).not.toContain('\u001b');
    expect(text.split('\n').filter((l) => l !== '')).toEqual([
      '1970-01-01T00:00:00.000Z error it failed',
      '1970-01-01T00:00:00.000Z warn  it may have cost',
      '1970-01-01T00:00:00.000Z debug a detail',
      '1970-01-01T00:00:00.000Z info  a fact',
    ]);
  });

  it('progress: each document line and the bar say the time left at the rate so far (ETA), from the run clock', async () => {
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    let now = 0;
    const reporter = await createReporter({
      stderr,
      style: 'plain',
      verbosity: 'normal',
      color: 0,
      now: () => now,
    });
    reporter.start(4);
    now = 2000;
    reporter.finished('a.pdf', 'ok', 'completed', { total: 4, done: 1, failed: 0, pages: 1 });
    now = 150_000;
    reporter.finished('b.pdf', 'ok', 'completed', { total: 4, done: 3, failed: 0, pages: 3 });
    now = 151_000;
    reporter.finished('c.pdf', 'ok', 'completed', { total: 4, done: 4, failed: 0, pages: 4 });
    reporter.stop();
    const lines = text.split('\n');
    expect(lines.find((l) => l.includes('a.pdf'))).toMatch(/\(0\.5 docs\/s, ETA 6\.0 s\)$/);
    expect(lines.find((l) => l.includes('b.pdf'))).toMatch(/\(0\.0 docs\/s, ETA 50 s\)$/);
    expect(lines.find((l) => l.includes('c.pdf'))).toMatch(/\(0\.0 docs\/s\)$/);
    // The bar's own field.
    expect(eta({ total: 10, done: 0, failed: 0, pages: 0 }, 0, 5000)).toBe('ETA --');
    expect(eta({ total: 10, done: 5, failed: 0, pages: 0 }, 0, 100_000)).toBe('ETA 1 min 40 s');
    expect(eta({ total: 10, done: 10, failed: 0, pages: 0 }, 0, 100_000)).toBe('');
  });
});

/** The bar as a terminal shows it: cli-progress draws only to a TTY, so the stream says it is one. */
async function barAfter(tallies: Array<[number, number]>, total: number): Promise<string> {
  const stderr = Object.assign(new PassThrough(), { isTTY: true, columns: 160 });
  let text = '';
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  let now = 0;
  const reporter = await createReporter({ stderr, style: 'bar', verbosity: 'normal', color: 0, now: () => now });
  reporter.start(total);
  for (const [at, done] of tallies) {
    now = at;
    reporter.finished(`doc-${done}.pdf`, 'ok', 'completed', { total, done, failed: 0, pages: done });
  }
  reporter.stop();
  // The last drawing of the bar: what is left on the terminal.
  const drawn = text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '\n').split(/[\r\n]/);
  return drawn.filter((l) => l.includes('documents')).at(-1) ?? '';
}

describe('progress bar', () => {
  it('progress bar: its last field is the time left, labelled, and "done" at the end', async () => {
    expect(await barAfter([[2000, 1]], 4)).toMatch(
      /1\/4 documents \| 1 pages \| 0 failed \| 0\.5 docs\/s \| ETA 6\.0 s$/,
    );
    expect(await barAfter([], 4)).toMatch(/0\/4 documents .*\| ETA --$/);
    expect(await barAfter([[2000, 2]], 2)).toMatch(/2\/2 documents .*\| done$/);
  });
});
