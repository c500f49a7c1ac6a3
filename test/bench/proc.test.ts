import { describe, expect, it } from 'vitest';
import { run } from '../../bench/lib/proc.ts';

/**
 * The bench runs many short commands that never read their standard input (sha256sum through
 * find, wrk, node -e 0). A runner that writes to one after it has ended gets EPIPE; unhandled,
 * that killed the whole bench run (the smoke test saw it under load: the runner descheduled
 * between spawn and its write while the command ran to its end).
 */
describe('bench/lib/proc.ts run', () => {
  it('a command that ends without reading its input is its exit status, not a crash of the runner', async () => {
    // More than a pipe holds (64 KiB), so the write is still pending when `true` ends: EPIPE every time.
    const result = await run('true', [], { input: 'x'.repeat(2 ** 20) });
    expect(result.code).toBe(0);
    // The runner survived the EPIPE: a later command runs as usual.
    expect((await run('sh', ['-c', 'echo ok'])).stdout).toBe('ok\n');
  });

  it('a command that reads its input gets all of it', async () => {
    const input = 'y'.repeat(2 ** 20);
    const result = await run('wc', ['-c'], { input });
    expect(result.stdout.trim()).toBe(String(input.length));
  });

  it('without input, a command reading its standard input sees its end at once', async () => {
    const result = await run('cat', [], { timeoutMs: 10_000 });
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});
