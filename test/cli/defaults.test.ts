import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_PENDING,
  DEFAULT_STATE_WAIT_MS,
} from '../../src/batch/options.ts';
import { DEFAULT_INLINE_MAX } from '../../src/batch/route.ts';
import { durationFlag, parseDuration, parseSize, sizeFlag } from '../../src/flags/units.ts';
import { DEFAULT_POLL } from '../../src/client/backoff.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { SERVE_DEFAULTS } from '../../src/emulator/defaults.ts';
import { RECEIVER_DEFAULTS } from '../../src/receiver/options.ts';

/** The default commander shows and hands over for a flag of `command` (the root command when undefined). */
function defaultOf(flag: string, command?: string): unknown {
  const program = buildProgram();
  const cmd = command === undefined ? program : program.commands.find((c) => c.name() === command);
  const option = cmd?.options.find((o) => o.long === flag);
  if (option === undefined) throw new Error(`no ${flag} on ${command ?? 'extract'}`);
  return option.defaultValue;
}

describe('cli: flag defaults come from the constants the code uses', () => {
  it('durations and sizes written as defaults read back unchanged', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 9 }), (ms) => parseDuration(durationFlag(ms)) === ms));
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 12 }), (b) => parseSize(sizeFlag(b)) === b));
    expect([durationFlag(2000), durationFlag(60_000), durationFlag(15 * 60_000), sizeFlag(5_000_000)]).toEqual([
      '2s',
      '60s',
      '15m',
      '5MB',
    ]);
    // --settle's default: none, in the unit people write for it.
    expect(durationFlag(0)).toBe('0s');
  });
  it('the batch command', () => {
    expect(parseSize(String(defaultOf('--inline-max')))).toBe(DEFAULT_INLINE_MAX);
    expect(Number(defaultOf('--concurrency'))).toBe(DEFAULT_CONCURRENCY);
    expect(Number(defaultOf('--max-pending'))).toBe(DEFAULT_MAX_PENDING);
    expect(parseDuration(String(defaultOf('--poll-interval')))).toBe(DEFAULT_POLL.intervalMs);
    expect(parseDuration(String(defaultOf('--poll-max-interval')))).toBe(DEFAULT_POLL.maxIntervalMs);
    expect(parseDuration(String(defaultOf('--poll-timeout')))).toBe(DEFAULT_POLL.timeoutMs);
    expect(defaultOf('--state')).toBeUndefined(); // the user's journal of the service (state/user-journal.ts)
    expect(parseDuration(String(defaultOf('--lease')))).toBe(DEFAULT_LEASE_MS);
    expect(parseDuration(String(defaultOf('--state-wait')))).toBe(DEFAULT_STATE_WAIT_MS);
  });
  it('get, status, serve and listen', () => {
    expect(parseDuration(String(defaultOf('--poll-interval', 'get')))).toBe(DEFAULT_POLL.intervalMs);
    expect(parseDuration(String(defaultOf('--poll-max-interval', 'get')))).toBe(DEFAULT_POLL.maxIntervalMs);
    expect(parseDuration(String(defaultOf('--poll-timeout', 'get')))).toBe(DEFAULT_POLL.timeoutMs);
    expect(parseDuration(String(defaultOf('--state-wait', 'status')))).toBe(DEFAULT_STATE_WAIT_MS);
    expect(defaultOf('--host', 'serve')).toBe(SERVE_DEFAULTS.host);
    expect(Number(defaultOf('--port', 'serve'))).toBe(SERVE_DEFAULTS.port);
    expect(Number(defaultOf('--listen-port', 'serve'))).toBe(RECEIVER_DEFAULTS.port);
    expect(defaultOf('--host', 'listen')).toBe(RECEIVER_DEFAULTS.host);
    expect(Number(defaultOf('--port', 'listen'))).toBe(RECEIVER_DEFAULTS.port);
    expect(Number(defaultOf('--max-body', 'listen'))).toBe(RECEIVER_DEFAULTS.maxBodyBytes);
  });
});
