import { describe, expect } from 'vitest';
import { it, extract, readJsonLines, reservesBySha, workDir } from './batch-helpers.ts';

describe('route fallback', () => {
  it('an inline 503 moves the file to upload-and-poll, once, and says so', async ({ serve }) => {
    // Every inline request is answered 503 (the service's inline time limit), before any work.
    const server = await serve({
      faults: { rules: [{ operation: 'extract-inline', probability: 1, effect: { type: 'status', status: 503 } }] },
    });
    const cwd = workDir();
    const run = await extract(cwd, server.url, [
      'in/01-us-standard.pdf',
      'in/05-receipt.pdf',
      '--route',
      'inline',
      '-v',
      '--poll-interval',
      '100ms',
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/moving it to upload-and-poll/);
    const records = readJsonLines(String(run.stdout));
    expect(records.map((r) => r.route)).toEqual(['inline->upload', 'inline->upload']);
    expect(records.every((r) => r.status === 'completed')).toBe(true);
    // The timed-out inline attempt cost nothing: one net charge per document.
    expect([...(await reservesBySha(server.url)).values()].every((n) => n === 1)).toBe(true);
  });
});
