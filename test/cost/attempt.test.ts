import { describe, expect, it } from 'vitest';
import {
  afterFailure,
  type AttemptFacts,
  circuitSignal,
  decide,
  failed,
  isGatewayStatus,
  laterRetry,
  probeAnswer,
  rerunOf,
  retryableKind,
  SERVICE_ERROR_KINDS,
  type ServiceErrorKind,
  type Step,
  stopsTheRun,
  unreadableAnswer,
  uploadAgain,
} from '../../src/cost/attempt.ts';

/**
 * The attempt table of cost/attempt.ts, row by row: what came of one attempt of one step ->
 * send it again now, or how it fails (kind), what it cost and how a later run treats it.
 */

type Answered = Extract<AttemptFacts, { connection: 'answered' }>;
type More = Partial<Omit<Answered, 'step' | 'status' | 'connection'>>;

/** An answer on the first of three attempts, with a body that is not the service's own error. */
function answer(step: Step, status: number, more: More = {}): AttemptFacts {
  return { step, attempt: 1, attempts: 3, connection: 'answered', status, body: 'other', ...more };
}
const inline = { inline: true };
const last = { attempt: 3, attempts: 3 };
function noAnswer(
  step: Step,
  connection: 'never' | 'no-answer',
  more: { attempt?: number; attempts?: number; inline?: boolean } = {},
): AttemptFacts {
  return { step, attempt: 1, attempts: 3, connection, ...more };
}

type Row = [name: string, facts: AttemptFacts, opened: boolean, expected: Record<string, unknown>];
const NOW = { ok: false, retry: 'now', charge: 'none', rateLimited: false };
const ok = (charge: string) => ({ ok: true, charge, rateLimited: false });
const fails = (kind: ServiceErrorKind, charge: string, retryable: boolean, retry: string) => ({
  ok: false,
  kind,
  charge,
  retryable,
  retry,
  rateLimited: false,
});
/** A 429: the rate-limit hook hears it whether it is sent again or fails. */
const limited = <T extends object>(decision: T) => ({ ...decision, rateLimited: true });

const ROWS: Row[] = [
  // No answer: a connection never made is safe to repeat; one that may have reached the service is not, for extract.
  ['ticket, never connected, not last: again', noAnswer('upload-url', 'never'), false, NOW],
  ['put, never connected, not last: again', noAnswer('put', 'never'), false, NOW],
  ['extract, never connected, not last: again', noAnswer('extract', 'never'), false, NOW],
  ['get, connected without answer, not last: again', noAnswer('get', 'no-answer'), false, NOW],
  ['put, connected without answer, not last: again', noAnswer('put', 'no-answer'), false, NOW],
  [
    'extract, connected without answer: never again this run, possibly charged',
    noAnswer('extract', 'no-answer'),
    false,
    fails('network', 'uncertain', true, 'with-retry-failed'),
  ],
  [
    'inline extract, connected without answer, even as the circuit opens: possibly charged',
    noAnswer('extract', 'no-answer', inline),
    true,
    fails('network', 'uncertain', true, 'with-retry-failed'),
  ],
  [
    'get, never connected, last attempt: network, free, on rerun',
    noAnswer('get', 'never', last),
    false,
    fails('network', 'none', true, 'on-rerun'),
  ],
  [
    'extract, never connected, last attempt: network, free',
    noAnswer('extract', 'never', last),
    false,
    fails('network', 'none', true, 'on-rerun'),
  ],
  [
    'get, no answer, past the last attempt: network',
    noAnswer('get', 'no-answer', { attempt: 4, attempts: 3 }),
    false,
    fails('network', 'none', true, 'on-rerun'),
  ],
  [
    'ticket, never connected, the circuit opened: unreachable',
    noAnswer('upload-url', 'never'),
    true,
    fails('unreachable', 'none', true, 'on-rerun'),
  ],
  [
    'extract, never connected, the circuit opened: unreachable',
    noAnswer('extract', 'never'),
    true,
    fails('unreachable', 'none', true, 'on-rerun'),
  ],
  // Success.
  ['get 200: success, free', answer('get', 200), false, ok('none')],
  ['ticket 201: success, free', answer('upload-url', 201), false, ok('none')],
  ['put 200: success, free', answer('put', 200), false, ok('none')],
  ['put 200 served as HTML: storage may, success', answer('put', 200, { html: true }), false, ok('none')],
  ['extract 200: charged', answer('extract', 200, inline), false, ok('charged')],
  ['extract 202 accepted: charged', answer('extract', 202), false, ok('charged')],
  ['get 299: success', answer('get', 299), false, ok('none')],
  ['get 199: not a success, refused', answer('get', 199), false, fails('rejected', 'none', false, 'with-retry-failed')],
  [
    'get 300: a redirect, never followed with the key: the base URL is not the service',
    answer('get', 300),
    false,
    fails('wrong_service', 'none', false, 'on-rerun'),
  ],
  [
    'upload-url 404 once the API answered: a route this service lacks',
    answer('upload-url', 404, { apiAnswered: true, html: true }),
    false,
    fails('no_route', 'none', false, 'with-retry-failed'),
  ],
  [
    'get 404 HTML once the API answered: no documents route',
    answer('get', 404, { apiAnswered: true, html: true }),
    false,
    fails('no_route', 'none', false, 'with-retry-failed'),
  ],
  [
    "get 404 JSON once the API answered: the service's unknown document",
    answer('get', 404, { apiAnswered: true }),
    false,
    fails('not_found', 'none', false, 'with-retry-failed'),
  ],
  [
    'inline 504 naming the function time limit: the inline 503, stopped and refunded',
    answer('extract', 504, { inline: true, functionTimeout: true }),
    false,
    fails('inline_unavailable', 'none', true, 'on-rerun'),
  ],
  [
    'storage-path 504 naming the function time limit: still a gateway, possibly charged',
    answer('extract', 504, { functionTimeout: true }),
    false,
    fails('server', 'uncertain', true, 'with-retry-failed'),
  ],
  [
    'inline 308: a redirect, never followed',
    answer('extract', 308, { inline: true }),
    false,
    fails('wrong_service', 'none', false, 'on-rerun'),
  ],
  [
    'extract 2xx unreadable: possibly charged, never sent again by itself',
    answer('extract', 200, { body: 'unreadable' }),
    false,
    fails('bad_response', 'uncertain', false, 'with-retry-failed'),
  ],
  [
    'get 2xx unreadable: bad answer, free',
    answer('get', 200, { body: 'unreadable' }),
    false,
    fails('bad_response', 'none', false, 'with-retry-failed'),
  ],
  // Not the service.
  [
    'get 200 HTML page: wrong service',
    answer('get', 200, { html: true }),
    false,
    fails('wrong_service', 'none', false, 'on-rerun'),
  ],
  [
    'get 499 HTML page: wrong service',
    answer('get', 499, { html: true }),
    false,
    fails('wrong_service', 'none', false, 'on-rerun'),
  ],
  ['get 500 HTML page: the service is down, again', answer('get', 500, { html: true }), false, NOW],
  ['ticket 404: wrong service', answer('upload-url', 404), false, fails('wrong_service', 'none', false, 'on-rerun')],
  [
    'inline extract 404: wrong service',
    answer('extract', 404, inline),
    false,
    fails('wrong_service', 'none', false, 'on-rerun'),
  ],
  [
    'storage-path extract 404: not found (an expired upload)',
    answer('extract', 404),
    false,
    fails('not_found', 'none', false, 'with-retry-failed'),
  ],
  ['get 404: not found', answer('get', 404), false, fails('not_found', 'none', false, 'with-retry-failed')],
  // 429: a refusal before any work.
  ['extract 429, not last: again, even extract', answer('extract', 429), false, limited(NOW)],
  ['get 429, attempt 2 of 3: again', answer('get', 429, { attempt: 2 }), false, limited(NOW)],
  [
    'get 429, last attempt: rate limited, free, on rerun',
    answer('get', 429, last),
    false,
    limited(fails('rate_limited', 'none', true, 'on-rerun')),
  ],
  [
    'extract 429, Retry-After past the longest wait: rate limited at once',
    answer('extract', 429, { pastDeadline: true }),
    false,
    limited(fails('rate_limited', 'none', true, 'on-rerun')),
  ],
  [
    'get 429 served as an HTML page: wrong service, not a rate limit',
    answer('get', 429, { html: true }),
    false,
    fails('wrong_service', 'none', false, 'on-rerun'),
  ],
  // 5xx of the idempotent steps: transient.
  ['get 500, not last: again', answer('get', 500), false, NOW],
  ['ticket 503, not last: again', answer('upload-url', 503), false, NOW],
  ['put 502, not last: again', answer('put', 502), false, NOW],
  ['get 500, last: server, free, on rerun', answer('get', 500, last), false, fails('server', 'none', true, 'on-rerun')],
  ['put 504, last: server, free', answer('put', 504, last), false, fails('server', 'none', true, 'on-rerun')],
  [
    'get 502, the circuit opened: unreachable',
    answer('get', 502),
    true,
    fails('unreachable', 'none', true, 'on-rerun'),
  ],
  ['get 503, the circuit said open (not a gateway status): again', answer('get', 503), true, NOW],
  // 5xx of POST extract: only the service's own refusal is sent again.
  [
    "extract 500 with the service's JSON error, not last: again (refunded per the spec)",
    answer('extract', 500, { body: 'service-error' }),
    false,
    NOW,
  ],
  [
    "extract 500 with the service's JSON error, last: server, free",
    answer('extract', 500, { body: 'service-error', ...last }),
    false,
    fails('server', 'none', true, 'on-rerun'),
  ],
  [
    "storage-path extract 503 with the service's JSON error: again",
    answer('extract', 503, { body: 'service-error' }),
    false,
    NOW,
  ],
  [
    'extract 500 not JSON (a proxy): possibly charged, not sent again',
    answer('extract', 500),
    false,
    fails('server', 'uncertain', true, 'with-retry-failed'),
  ],
  [
    "extract 502 even with a JSON error: a gateway's, possibly charged",
    answer('extract', 502, { body: 'service-error' }),
    false,
    fails('server', 'uncertain', true, 'with-retry-failed'),
  ],
  [
    'extract 504, the circuit opened: still possibly charged, not unreachable',
    answer('extract', 504),
    true,
    fails('server', 'uncertain', true, 'with-retry-failed'),
  ],
  [
    "extract 501 with the service's JSON error: not a refund the spec names, possibly charged",
    answer('extract', 501, { body: 'service-error' }),
    false,
    fails('server', 'uncertain', true, 'with-retry-failed'),
  ],
  [
    "inline extract 503 with the service's JSON error: inline unavailable, free",
    answer('extract', 503, { ...inline, body: 'service-error' }),
    false,
    fails('inline_unavailable', 'none', true, 'on-rerun'),
  ],
  [
    'inline extract 503: inline unavailable',
    answer('extract', 503, inline),
    false,
    fails('inline_unavailable', 'none', true, 'on-rerun'),
  ],
  [
    'inline extract 413: inline unavailable (too large for inline)',
    answer('extract', 413, inline),
    false,
    fails('inline_unavailable', 'none', true, 'on-rerun'),
  ],
  [
    'storage-path extract 413: refused',
    answer('extract', 413),
    false,
    fails('rejected', 'none', false, 'with-retry-failed'),
  ],
  // The signed upload address.
  ...[401, 403, 404, 410].map(
    (status): Row => [
      `put ${status}: the ticket expired, free, on rerun`,
      answer('put', status),
      false,
      fails('ticket_expired', 'none', true, 'on-rerun'),
    ],
  ),
  [
    'put 400 saying it expired: the ticket expired',
    answer('put', 400, { saysExpired: true }),
    false,
    fails('ticket_expired', 'none', true, 'on-rerun'),
  ],
  ['put 400: refused', answer('put', 400), false, fails('rejected', 'none', false, 'with-retry-failed')],
  ['put 402: out of credits', answer('put', 402), false, fails('out_of_credits', 'none', true, 'on-rerun')],
  // The API's refusals.
  ['ticket 401: auth, stops the run', answer('upload-url', 401), false, fails('auth', 'none', true, 'on-rerun')],
  ['get 403: auth', answer('get', 403), false, fails('auth', 'none', true, 'on-rerun')],
  [
    'extract 401 saying expired: auth (only PUT reads that)',
    answer('extract', 401, { saysExpired: true }),
    false,
    fails('auth', 'none', true, 'on-rerun'),
  ],
  [
    'extract 402: out of credits, free',
    answer('extract', 402),
    false,
    fails('out_of_credits', 'none', true, 'on-rerun'),
  ],
  [
    'extract 400: refused, free, set aside',
    answer('extract', 400),
    false,
    fails('rejected', 'none', false, 'with-retry-failed'),
  ],
  ['get 410: refused', answer('get', 410), false, fails('rejected', 'none', false, 'with-retry-failed')],
  [
    'extract 422: refused',
    answer('extract', 422, inline),
    false,
    fails('rejected', 'none', false, 'with-retry-failed'),
  ],
];

describe('cost: the attempt table', () => {
  it.each(ROWS)('%s', (_name, facts, opened, expected) => {
    expect(decide(facts, opened)).toEqual(expected);
  });

  it('the circuit has not opened unless the client says so', () => {
    expect(decide(noAnswer('get', 'never'))).toEqual(NOW);
    expect(decide(answer('get', 502))).toEqual(NOW);
  });

  it('the circuit is told of no answer, of a gateway, of any other answer; not of a page that is not the service', () => {
    expect(circuitSignal(noAnswer('get', 'never'))).toBe('unanswered');
    expect(circuitSignal(noAnswer('extract', 'no-answer'))).toBe('unanswered');
    expect(circuitSignal(answer('get', 502))).toBe('unanswered');
    expect(circuitSignal(answer('extract', 504))).toBe('unanswered');
    expect(circuitSignal(answer('get', 502, { html: true }))).toBe('unanswered');
    for (const status of [200, 400, 429, 500, 501, 503, 505])
      expect(circuitSignal(answer('get', status))).toBe('answered');
    expect(circuitSignal(answer('put', 200, { html: true }))).toBe('answered');
    expect(circuitSignal(answer('get', 200, { html: true }))).toBeUndefined();
    expect(circuitSignal(answer('upload-url', 404))).toBeUndefined();
  });

  it('gateway statuses are 502 and 504 only', () => {
    expect([500, 501, 502, 503, 504, 505].filter(isGatewayStatus)).toEqual([502, 504]);
  });

  it('a default retry on every kind: only what the service judged fails again', () => {
    const judged = SERVICE_ERROR_KINDS.filter((k) => !retryableKind(k));
    expect(judged).toEqual(['not_found', 'rejected', 'bad_response', 'wrong_service', 'no_route']);
    expect(SERVICE_ERROR_KINDS).toHaveLength(14);
  });

  it('the kinds that stop a run', () => {
    expect(SERVICE_ERROR_KINDS.filter((k) => stopsTheRun(k) !== undefined)).toEqual([
      'auth',
      'out_of_credits',
      'unreachable',
      'wrong_service',
    ]);
    expect(stopsTheRun('auth')).toBe('auth');
    expect(stopsTheRun('wrong_service')).toBe('wrong_service');
  });

  it('how a later run treats a failure', () => {
    expect(laterRetry('aborted', 'none', true)).toBe('on-rerun');
    expect(laterRetry('aborted', 'uncertain', false)).toBe('on-rerun');
    expect(laterRetry('auth', 'none', true)).toBe('on-rerun');
    expect(laterRetry('wrong_service', 'none', false)).toBe('on-rerun');
    expect(laterRetry('network', 'none', true)).toBe('on-rerun');
    expect(laterRetry('network', 'uncertain', true)).toBe('with-retry-failed');
    expect(laterRetry('server', 'refunded', true)).toBe('on-rerun');
    expect(laterRetry('rejected', 'refunded', false)).toBe('with-retry-failed');
    expect(laterRetry('rejected', 'none', false)).toBe('with-retry-failed');
    expect(failed('server', 'uncertain', false)).toEqual({
      kind: 'server',
      charge: 'uncertain',
      retryable: false,
      retry: 'with-retry-failed',
    });
    expect(failed('rejected')).toEqual({
      kind: 'rejected',
      charge: 'none',
      retryable: false,
      retry: 'with-retry-failed',
    });
  });

  it('a storage-path extract refused for its upload (404, 410) is uploaded again', () => {
    expect([400, 403, 404, 409, 410, 500, undefined].filter(uploadAgain)).toEqual([404, 410]);
  });

  it('an unreadable 2xx costs what its step may cost', () => {
    for (const step of ['upload-url', 'put', 'get'] as const) expect(unreadableAnswer(step).charge).toBe('none');
    expect(unreadableAnswer('extract')).toEqual({
      kind: 'bad_response',
      charge: 'uncertain',
      retryable: false,
      retry: 'with-retry-failed',
    });
  });

  it('no step costs anything but extract: across every answer, only extract is ever charged or uncertain', () => {
    const statuses = [200, 202, 400, 401, 402, 403, 404, 410, 413, 429, 500, 502, 503, 504];
    for (const step of ['upload-url', 'put', 'get'] as const)
      for (const status of statuses)
        for (const body of ['service-error', 'other', 'unreadable'] as const)
          for (const attempt of [1, 3])
            expect(decide(answer(step, status, { body, attempt }), attempt === 3).charge).toBe('none');
  });

  it('a journaled failure: a plain rerun sends only what cost nothing and may pass', () => {
    expect(rerunOf({ charge: 'none', retryable: true })).toBe('on-rerun');
    expect(rerunOf({ charge: 'none', retryable: false })).toBe('with-retry-failed');
    expect(rerunOf({ charge: 'uncertain', retryable: true })).toBe('with-retry-failed');
    // Refunded and may pass (an inline success: false): costs nothing net, sent again.
    expect(rerunOf({ charge: 'refunded', retryable: true })).toBe('on-rerun');
    expect(rerunOf({ charge: 'refunded', retryable: false })).toBe('with-retry-failed');
  });

  it('after a failure: what ends the run leaves the unsent "not submitted" and the submitted pending', () => {
    const ends = SERVICE_ERROR_KINDS.filter((k) => afterFailure(k, null) === 'not-submitted');
    expect(ends).toEqual(['auth', 'out_of_credits', 'unreachable', 'wrong_service', 'aborted']);
    for (const kind of ends) expect(afterFailure(kind, 'doc-1')).toBe('pending-at-stop');
    for (const kind of SERVICE_ERROR_KINDS.filter((k) => !ends.includes(k))) {
      expect(afterFailure(kind, null)).toBe('failed');
      // A failed poll leaves the document the service's; a 404 says the service does not hold it.
      expect(afterFailure(kind, 'doc-1')).toBe(kind === 'not_found' ? 'failed' : 'pending');
    }
  });

  it("a probe's answer: 403 and 404 say the key does not see the document; 401 rejects the key; the rest settles nothing", () => {
    expect(probeAnswer({ kind: 'not_found', status: 404 })).toBe('unseen');
    expect(probeAnswer({ kind: 'not_found' })).toBe('unseen');
    expect(probeAnswer({ kind: 'auth', status: 403 })).toBe('unseen');
    expect(probeAnswer({ kind: 'wrong_service', status: 404 })).toBe('unseen');
    expect(probeAnswer({ kind: 'auth', status: 401 })).toBe('key-rejected');
    expect(probeAnswer({ kind: 'auth' })).toBe('key-rejected');
    for (const kind of ['network', 'server', 'unreachable', 'rate_limited', 'bad_response', 'wrong_service'] as const)
      expect(probeAnswer({ kind, status: kind === 'server' ? 500 : undefined })).toBe('unsettled');
  });
});
