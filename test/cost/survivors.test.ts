import { describe, expect, it } from 'vitest';
import { replan } from '../../src/batch/plan/jobs.ts';
import { ServiceError } from '../../src/client/errors.ts';
import { type AttemptFacts, circuitSignal, decide, SERVICE_ERROR_KINDS } from '../../src/cost/attempt.ts';
import { replayer, stateKey, type JournalFact } from '../../src/journal/journal.ts';
import { job } from '../batch/jobs.ts';

/**
 * The mutants found surviving every unit test (some every test but the slow chaos
 * run), each held here by name, in-process.
 */

const answer = (step: AttemptFacts['step'], status: number, attempt = 1, more = {}): AttemptFacts => ({
  step,
  attempt,
  attempts: 3,
  connection: 'answered',
  status,
  body: 'other',
  ...more,
});

describe('cost: the survivors of mutation testing', () => {
  it('a 429 is not retried forever: the last attempt, or a Retry-After past the longest wait, fails', () => {
    expect(decide(answer('get', 429, 3))).toMatchObject({ kind: 'rate_limited', charge: 'none' });
    expect(decide(answer('extract', 429, 3))).toMatchObject({ kind: 'rate_limited', charge: 'none' });
    expect(decide(answer('extract', 429, 1, { pastDeadline: true }))).toMatchObject({ kind: 'rate_limited' });
    expect(decide(answer('extract', 429, 2))).toEqual({ ok: false, retry: 'now', charge: 'none', rateLimited: true });
  });

  it("a proxy's 502 and 504 count as no answer for the circuit, and open it", () => {
    expect(circuitSignal(answer('get', 502))).toBe('unanswered');
    expect(circuitSignal(answer('upload-url', 504))).toBe('unanswered');
    expect(decide(answer('get', 502), true)).toMatchObject({ kind: 'unreachable' });
    expect(decide(answer('put', 504), true)).toMatchObject({ kind: 'unreachable' });
  });

  it('--retry-failed resends an uncertain request under its own Idempotency-Key (replan keeps the request)', () => {
    const common = { at: '2026-01-01T00:00:00.000Z', sha256: 'sha1', target: 't', file: '1.pdf' };
    const request = { idempotency_key: 'extract-first-key', file_name: '1.pdf', file_type: 'application/pdf' };
    const inDoubt = {
      fact: 'failed' as const,
      ...common,
      route: 'inline' as const,
      document_id: null,
      reason: 'the connection failed',
      retryable: true,
      charge: 'uncertain' as const,
      request,
    };
    const again = replan(job(1), inDoubt, true, false);
    expect(again.action).toBe('submit');
    expect(again.resend).toEqual(request);
    const crashed = replan(job(1), { fact: 'sending', ...common, route: 'inline', request }, true, false);
    expect(crashed.resend?.idempotency_key).toBe('extract-first-key');
    // --fresh is a new request, under a new key.
    expect(replan(job(1), inDoubt, true, false, true).resend).toBeUndefined();
  });

  it('journal: a failure that cost nothing never erases what an earlier run learned; one that may have cost does', () => {
    const common = { at: '2026-01-01T00:00:00.000Z', sha256: 'sha1', target: 't', file: '1.pdf' };
    const key = stateKey('sha1', 't');
    const done: JournalFact = {
      fact: 'completed',
      ...common,
      route: 'inline',
      document_id: 'doc-1',
      page_count: 1,
      results: {},
    };
    const free: JournalFact = {
      fact: 'failed',
      ...common,
      route: 'inline',
      document_id: null,
      reason: 'ECONNREFUSED',
      retryable: true,
      charge: 'none',
    };
    const replay = replayer();
    replay.apply(done);
    replay.apply(free);
    expect(replay.known.get(key)?.fact).toBe('completed');
    replay.apply({ ...free, charge: 'uncertain' });
    expect(replay.known.get(key)).toMatchObject({ fact: 'failed', charge: 'uncertain' });
    // A free failure after a failure that may have cost: the later one stands only if the earlier cost nothing.
    replay.apply(free);
    expect(replay.known.get(key)).toMatchObject({ fact: 'failed', charge: 'uncertain' });
    const fresh = replayer();
    fresh.apply({ ...free, reason: 'first' });
    fresh.apply({ ...free, reason: 'second' });
    expect(fresh.known.get(key)).toMatchObject({ reason: 'second' });
  });

  it.each([401, 403, 404, 410])(
    'PUT %i: the upload address is refused, a new ticket is needed (not auth, not a bad file)',
    (status) => {
      expect(decide(answer('put', status))).toEqual({
        ok: false,
        rateLimited: false,
        kind: 'ticket_expired',
        charge: 'none',
        retryable: true,
        retry: 'on-rerun',
      });
    },
  );

  it('a ServiceError of each kind says by default whether the same document may pass later', () => {
    const defaults = Object.fromEntries(SERVICE_ERROR_KINDS.map((k) => [k, new ServiceError(k, 'x').retryable]));
    expect(defaults).toEqual({
      auth: true,
      out_of_credits: true,
      inline_unavailable: true,
      rate_limited: true,
      server: true,
      network: true,
      unreachable: true,
      ticket_expired: true,
      not_found: false,
      rejected: false,
      bad_response: false,
      wrong_service: false,
      no_route: false,
      aborted: true,
    });
    expect(new ServiceError('rejected', 'x', { retryable: true }).retryable).toBe(true);
    expect(new ServiceError('server', 'x', { retryable: false }).retryable).toBe(false);
    expect(new ServiceError('server', 'x').charge).toBe('none');
  });
});
