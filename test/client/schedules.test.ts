import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_RETRY } from '../../src/client/backoff.ts';
import { Circuit, type ClientDeps, ServiceClient, type ServiceError } from '../../src/client/index.ts';

/**
 * The client's schedules in process, on a fake clock (sleep advances it and records the delay
 * asked for) and an undici MockAgent: how long each retry waits, how many there are, when a
 * 429 stops being retried, and how the circuit counts what the service and its gateway answer.
 * Which failures are retried at all, and what each costs, is the failure-cost table's own
 * test (test/cost/); these are about time.
 */

const BASE = 'http://service.test';
const KEY = 'ext_schedules_test_key_0001';
const DOC = '/api/v1/documents/doc_1';
const doc = { document_id: 'doc_1', status: 'completed', file_name: 'a.pdf', page_count: 1, results: {}, error: null };

type FakeDeps = ClientDeps & { slept: number[]; signals: (AbortSignal | undefined)[]; at: () => number };

function fakeDeps(agent: MockAgent): FakeDeps {
  let t = 1_000_000;
  const slept: number[] = [];
  const signals: (AbortSignal | undefined)[] = [];
  return {
    dispatcher: agent,
    now: () => t,
    sleep: async (ms, signal) => {
      // A retry without end would spin here for ever on a fake clock: fail it instead.
      if (slept.length >= 100) throw new Error(`still retrying after 100 waits: ${slept.slice(-5).join(', ')} ms`);
      slept.push(ms);
      signals.push(signal);
      t += ms;
    },
    random: () => 0.5,
    log: () => {},
    slept,
    signals,
    at: () => t,
  };
}

let agent: MockAgent;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
});
afterEach(async () => {
  await agent.close();
});

const failure = (p: Promise<unknown>): Promise<ServiceError> =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as ServiceError,
  );

/** The delays DEFAULT_RETRY asks for between its attempts, at random() = 0.5. */
const SCHEDULE = Array.from({ length: DEFAULT_RETRY.attempts - 1 }, (_, i) => backoffDelay(i + 1, () => 0.5));

describe('retry schedule', () => {
  it('a GET that keeps failing: every attempt of the budget, each after its backoff delay, then the failure', async () => {
    agent.get(BASE).intercept({ path: DOC, method: 'GET' }).reply(503, 'busy').times(DEFAULT_RETRY.attempts);
    const deps = fakeDeps(agent);
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps).getDocument('doc_1'));
    expect(err.status).toBe(503);
    expect(SCHEDULE).toEqual([375, 750, 1500, 3000, 6000]);
    expect(deps.slept).toEqual(SCHEDULE);
  });

  it('a policy of its own: 3 attempts from 100 ms, capped at 150 ms', async () => {
    agent.get(BASE).intercept({ path: DOC, method: 'GET' }).reply(503, 'busy').times(3);
    const deps = fakeDeps(agent);
    const retry = { attempts: 3, baseMs: 100, capMs: 150, maxRetryAfterMs: 1000 };
    await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY, retry }, deps).getDocument('doc_1'));
    expect(deps.slept).toEqual([75, 113]);
  });

  it('429 every time: retried to the budget and no further, each wait the longer of Retry-After and the backoff', async () => {
    agent
      .get(BASE)
      .intercept({ path: DOC, method: 'GET' })
      .reply(429, { error: 'slow down' }, { headers: { 'retry-after': '1' } })
      .persist();
    const deps = fakeDeps(agent);
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps).getDocument('doc_1'));
    expect(err.kind).toBe('rate_limited');
    expect(deps.slept).toEqual(SCHEDULE.map((ms) => Math.max(1000, ms)));
  });

  it('429 with a Retry-After past the longest we agree to wait: refused at once, nothing waited', async () => {
    const retryAfterS = DEFAULT_RETRY.maxRetryAfterMs / 1000 + 1;
    agent
      .get(BASE)
      .intercept({ path: DOC, method: 'GET' })
      .reply(429, { error: 'come back tomorrow' }, { headers: { 'retry-after': String(retryAfterS) } });
    const deps = fakeDeps(agent);
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps).getDocument('doc_1'));
    expect(err.kind).toBe('rate_limited');
    expect(deps.slept).toEqual([]);
  });

  it('429 with Retry-After exactly the longest we wait: waited, then the answer', async () => {
    const pool = agent.get(BASE);
    pool
      .intercept({ path: DOC, method: 'GET' })
      .reply(429, {}, { headers: { 'retry-after': String(DEFAULT_RETRY.maxRetryAfterMs / 1000) } });
    pool.intercept({ path: DOC, method: 'GET' }).reply(200, doc);
    const deps = fakeDeps(agent);
    await new ServiceClient({ baseUrl: BASE, apiKey: KEY }, deps).getDocument('doc_1');
    expect(deps.slept).toEqual([DEFAULT_RETRY.maxRetryAfterMs]);
  });
});

describe('the circuit, as the client feeds it', () => {
  it("a gateway's 502 and 504 count as unanswered: five over 5 s open it, and the GET ends unreachable", async () => {
    const pool = agent.get(BASE);
    for (const status of [502, 504, 502, 504, 502])
      pool.intercept({ path: DOC, method: 'GET' }).reply(status, '<html>gateway</html>');
    const deps = fakeDeps(agent);
    const circuit = new Circuit(deps.now, { failures: 5, spanMs: 5_000 });
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY, circuit }, deps).getDocument('doc_1'));
    expect(err.kind).toBe('unreachable');
    expect(err.message).toContain('HTTP 502 on 5 attempts in a row');
    expect(circuit.isOpen).toBe(true);
    // 375 + 750 + 1500 + 3000 ms: the fifth 502 is the first 5 s after the first.
    expect(deps.slept).toEqual(SCHEDULE.slice(0, 4));
  });

  it("the service's own 503 is an answer: it closes the count, so a run against a busy service never opens it", async () => {
    const pool = agent.get(BASE);
    for (const status of [502, 502, 502, 502, 503, 502])
      pool.intercept({ path: DOC, method: 'GET' }).reply(status, 'x');
    const deps = fakeDeps(agent);
    const circuit = new Circuit(deps.now, { failures: 5, spanMs: 5_000 });
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY, circuit }, deps).getDocument('doc_1'));
    expect(err.status).toBe(502);
    expect(circuit.isOpen).toBe(false);
  });

  it('a backoff wait is given the circuit signal: when another request opens the circuit, the wait ends', async () => {
    agent.get(BASE).intercept({ path: DOC, method: 'GET' }).reply(503, 'busy');
    agent.get(BASE).intercept({ path: DOC, method: 'GET' }).reply(200, doc);
    const deps = fakeDeps(agent);
    const circuit = new Circuit(deps.now, { failures: 1, spanMs: 0 });
    await new ServiceClient({ baseUrl: BASE, apiKey: KEY, circuit }, deps).getDocument('doc_1');
    const [signal] = deps.signals;
    expect(signal?.aborted).toBe(false);
    circuit.unanswered('ECONNREFUSED');
    expect(signal?.aborted).toBe(true);
  });

  it('once open, nothing more is sent: the next request is unreachable without an attempt', async () => {
    const deps = fakeDeps(agent);
    const circuit = new Circuit(deps.now, { failures: 1, spanMs: 0 });
    circuit.unanswered('ECONNREFUSED');
    // No interceptor: a request that were sent would fail as a MockAgent refusal, not unreachable.
    const err = await failure(new ServiceClient({ baseUrl: BASE, apiKey: KEY, circuit }, deps).getDocument('doc_1'));
    expect(err.kind).toBe('unreachable');
    expect(deps.slept).toEqual([]);
  });
});
