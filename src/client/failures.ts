import { API_PREFIX } from '../contract/index.ts';
import type { Failure, Step } from '../cost/attempt.ts';
import { redact } from '../redact.ts';
import type { Circuit } from './circuit.ts';
import { ServiceError } from './errors.ts';

/**
 * A failed call in words a person can act on: what happened and what to do next. Which kind of
 * failure it is, and what it charged, is cost/attempt.ts's table; this only words it.
 */

/** The service a call went to, as messages name it. */
export type CalledService = { baseUrl: string; shownBase: string; circuit: Circuit | undefined };

/** What came of the last attempt, for the message. */
export type Got = {
  attempt: number;
  code?: string;
  cause?: unknown;
  status?: number;
  detail?: string;
  html?: boolean;
  location?: string | undefined;
};

/** The error of a failed call; its kind and charge are the table's. */
export function failureError(
  call: { step: Step; subject: string },
  label: string,
  decision: Failure,
  got: Got,
  service: CalledService,
): ServiceError {
  const { kind, charge, retryable } = decision;
  const status = got.status;
  const options = {
    retryable,
    charge,
    ...(status !== undefined && { status }),
    ...(got.cause !== undefined && { cause: got.cause }),
  };
  const what = `${call.subject}: ${got.detail} (HTTP ${status})`;
  switch (kind) {
    case 'unreachable':
      return unreachableError(service.baseUrl, service.circuit);
    case 'wrong_service':
      return status !== undefined && status >= 300 && status < 400
        ? redirected(status, label, service.baseUrl, got.location)
        : wrongService(status, label, service.baseUrl, got.html === true);
    case 'no_route':
      return noRouteError(call, service.shownBase, options, ' (HTTP 404)');
    case 'network':
      return new ServiceError(
        'network',
        decision.retry === 'with-retry-failed'
          ? `the connection failed (${got.code}) after the extract request for ${call.subject} may have reached the service; ` +
              'it was not sent again so the document cannot be charged twice: check the document list, then rerun with --retry-failed ' +
              '(which resends the same request under the same Idempotency-Key)'
          : `${label}: ${got.code} after ${got.attempt} attempts: check the network and the base URL, then rerun`,
        options,
      );
    case 'rate_limited':
      return new ServiceError(
        kind,
        `${label}: the service is still rate limiting (429) after ${got.attempt} attempts: rerun later with a lower -c`,
        options,
      );
    case 'ticket_expired':
      return new ServiceError(kind, `the upload address for ${what} was refused; a new one is needed`, options);
    case 'auth':
      return new ServiceError(kind, `the service rejected the API key (HTTP ${status}: ${got.detail})`, options);
    case 'out_of_credits':
      return new ServiceError(
        kind,
        `out of credits (HTTP 402: ${got.detail}): top up the account, then rerun; the journal resumes where this run stopped`,
        options,
      );
    case 'inline_unavailable':
      return new ServiceError(
        kind,
        status === 504
          ? `inline extraction of ${call.subject} was stopped by the service's time limit (HTTP 504 FUNCTION_INVOCATION_TIMEOUT; the service refunds it)`
          : status === 413
            ? `inline extraction of ${call.subject} was refused as too large (HTTP 413: ${got.detail})`
            : `inline extraction of ${what} did not complete`,
        options,
      );
    case 'not_found':
      return new ServiceError(kind, `not found: ${what}`, options);
    case 'server':
      return new ServiceError(
        kind,
        decision.retry === 'with-retry-failed'
          ? `${what}: the answer came from a proxy, not the service, so the extract request may have reached the service and been charged; ` +
              'it was not sent again: check the document list, then rerun with --retry-failed (same request, same Idempotency-Key)'
          : `the service failed on ${what}; nothing was charged, and a rerun tries again`,
        options,
      );
    default:
      return new ServiceError(kind, `the service refused ${what}`, options);
  }
}

/** The service lacks the route a step needs: known before asking (offers.ts), or heard as a 404. */
export function noRouteError(
  call: { step: Step; subject: string },
  shownBase: string,
  options: ConstructorParameters<typeof ServiceError>[2] = { status: 404 },
  heard = '',
): ServiceError {
  const lacks = call.step === 'get' ? 'no route to read a document' : 'no upload route';
  return new ServiceError('no_route', `${call.subject}: the service at ${shownBase} has ${lacks}${heard}`, options);
}

/** The circuit is open: the service stopped answering, so the run stops sending. */
export function unreachableError(baseUrl: string, circuit: Circuit | undefined): ServiceError {
  return new ServiceError(
    'unreachable',
    `the service at ${baseUrl} is not answering (${circuit?.describe() ?? 'no answer'}): stopped sending; ` +
      'check that it is up and that the base URL is right, then rerun the same command (nothing unsent was charged)',
  );
}

/**
 * A redirect on the base URL: never followed, since the key would go with it to wherever it
 * points; the message names the base URL it points at, to set instead.
 */
function redirected(status: number, label: string, baseUrl: string, location: string | undefined): ServiceError {
  let to: string | undefined;
  try {
    if (location !== undefined) {
      const url = new URL(location, `${baseUrl}/`);
      const at = url.pathname.indexOf(API_PREFIX);
      to = describeUrl(`${url.origin}${at >= 0 ? url.pathname.slice(0, at) : url.pathname}`).replace(/\/+$/, '');
    }
  } catch {
    to = undefined;
  }
  const where =
    to === undefined
      ? 'without saying where'
      : `to ${to}: set that as the base URL (EXTRACT_BASE_URL=${to}, or --base-url, or the config store)`;
  return new ServiceError(
    'wrong_service',
    `${label} answered a redirect (HTTP ${status}) ${where}; it was not followed, so the API key went nowhere else; nothing was charged: fix it, then rerun the same command`,
    { status },
  );
}

/** The error for a base URL that is not the service (cost/attempt.ts says when an answer shows it). */
function wrongService(status: number | undefined, label: string, baseUrl: string, html: boolean): ServiceError {
  const base = describeUrl(baseUrl);
  const hint = /\/api\/v1(\/|$)/.test(base)
    ? `the base URL ${base} already holds /api/v1, which extract adds itself, so the path has /api/v1 twice: drop it from the base URL (--base-url, EXTRACT_BASE_URL or the config store)`
    : `wrong host or port? the base URL is the service's address without /api/v1 (now ${base})`;
  const what = html ? `an HTML page (HTTP ${status})` : 'HTTP 404 Not Found';
  return new ServiceError(
    'wrong_service',
    `${label} answered ${what}, so ${base} is not the extraction service: ${hint}; nothing was charged: fix it, then rerun the same command`,
    { ...(status !== undefined && { status }) },
  );
}

/** A URL for logs: origin and path only, so an upload signature never reaches a log line. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return redact(`${u.origin}${u.pathname}`);
  } catch {
    return redact(url);
  }
}
