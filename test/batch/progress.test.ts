import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createReporter } from '../../src/batch/progress.ts';

async function linesOf(color: boolean): Promise<string> {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const reporter = await createReporter({ stderr, style: 'plain', verbosity: 'verbose', color, now: () => 0 });
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
});
