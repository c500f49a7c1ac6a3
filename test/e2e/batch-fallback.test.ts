import { describe, expect, it } from 'vitest';
import { extract, readJsonLines, reservesBySha, serve, workDir } from './batch-helpers.ts';

describe('route fallback', () => {
  it('an inline 503 moves the file to upload-and-poll, once, and says so', async () => {
    // Every page takes 300 ms but the inline limit is 50 ms: each inline request times out.
    const server = await serve({ inline: { timeout_ms: 50, max_body_bytes: 10 * 1024 * 1024 }, processing: { ms_per_page: 300, concurrency: 4 } });
    const cwd = workDir();
    const run = await extract(cwd, server.url, ['in/01-us-standard.pdf', 'in/05-receipt.pdf', '--route', 'inline', '-v', '--poll-interval', '100ms']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/moving it to upload-and-poll/);
    const records = readJsonLines(String(run.stdout));
    expect(records.map((r) => r.route)).toEqual(['inline->upload', 'inline->upload']);
    expect(records.every((r) => r.status === 'completed')).toBe(true);
    // The timed-out inline attempt cost nothing: one net charge per document.
    expect([...(await reservesBySha(server.url)).values()].every((n) => n === 1)).toBe(true);
  });

});
