import { ErrorAnswer } from '../contract/index.ts';
import { errnoCode } from '../errno.ts';
import { redact } from '../redact.ts';

/** Why a call to the service failed, in the words the batch pipeline acts on. */
export type ServiceErrorKind =
  /** 401/403 from an API operation: the key was rejected. Stops the run (exit 4). */
  | 'auth'
  /** 402: out of credits. Stops submitting (exit 3). */
  | 'out_of_credits'
  /** 503 on the inline route: the inline time limit; the file moves to upload-and-poll. */
  | 'inline_unavailable'
  /** 429 still returned after the retries. */
  | 'rate_limited'
  /** 5xx (other than an inline 503), after the retries of an idempotent step. */
  | 'server'
  /** No HTTP answer (reset, timed out after connecting), or no connection after the retries. */
  | 'network'
  /** The circuit is open: the service has not answered for a while; nothing more is sent this run. */
  | 'unreachable'
  /** The signed upload address is no longer accepted: ask for a new ticket. */
  | 'ticket_expired'
  /** 404 on a document. */
  | 'not_found'
  /** Another 4xx: the service refused this request as it is (bad file, too large...). */
  | 'rejected'
  /** A 2xx whose body is not what the spec describes. */
  | 'bad_response'
  /** The base URL is not the service: a 404 on the API's own paths, or an HTML page. Stops the run (exit 2). */
  | 'wrong_service'
  /** The caller aborted (SIGINT). */
  | 'aborted';

/**
 * What a failed call may have cost. Only POST extract reserves credits, so every other step
 * is 'none'. For POST extract:
 * - none: the service created no document (no connection was made, or it answered with a
 *   refusal of its own: 4xx, 429, or its own 500 with a JSON error body, refunded per the spec)
 * - uncertain: the request may have reached the service and its answer was lost (a dropped
 *   connection, a proxy's 502/504 or non-JSON 500, an unreadable 2xx): it may have been charged
 */
export type Charge = 'none' | 'uncertain';

export class ServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly status: number | undefined;
  /** Whether trying the same document again later may succeed (journal: failed.retryable). */
  readonly retryable: boolean;
  readonly charge: Charge;
  /** A bad answer that still named its document: what `extract get` fetches once the service answers properly. */
  readonly documentId: string | undefined;
  /** Its pages, when the bad answer still said them as a page count. */
  readonly pageCount: number | undefined;
  constructor(
    kind: ServiceErrorKind,
    message: string,
    options: {
      status?: number;
      retryable?: boolean;
      charge?: Charge;
      cause?: unknown;
      documentId?: string | undefined;
      pageCount?: number | undefined;
    } = {},
  ) {
    // Messages quote service bodies and URLs: never let a key or a signature through.
    super(redact(message), { cause: options.cause });
    this.name = 'ServiceError';
    this.kind = kind;
    this.status = options.status;
    this.retryable = options.retryable ?? defaultRetryable(kind);
    this.charge = options.charge ?? 'none';
    this.documentId = options.documentId;
    this.pageCount = options.pageCount;
  }
}

function defaultRetryable(kind: ServiceErrorKind): boolean {
  return kind !== 'rejected' && kind !== 'not_found' && kind !== 'bad_response' && kind !== 'wrong_service';
}

/**
 * The spec does not show the shape of error bodies. Read `error` or `message` when the
 * body is JSON that has one (a string, or an object with a message), else a short excerpt.
 */
export function describeErrorBody(text: string): string {
  const found = serviceErrorMessage(text);
  if (found !== undefined) return redact(found);
  const oneLine = text.trim().replace(/\s+/g, ' ');
  if (oneLine === '') return '(empty body)';
  return redact(oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine);
}

/**
 * The message of an error answer written by the service itself: a JSON object naming an
 * error (`{"error": "..."}`, `{"error": {"message": "..."}}`, `{"message": "..."}`).
 * A proxy in front of the service answers with HTML or plain text instead; this is how the
 * service's own 500 (refunded, per the spec) is told apart from a gateway's (README: Routes).
 */
export function serviceErrorMessage(text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = ErrorAnswer.safeParse(json);
  if (!parsed.success) return undefined;
  const { error, message, detail } = parsed.data;
  const fromError = typeof error === 'string' ? error : error?.message;
  return [fromError, message, detail].find((m): m is string => m !== undefined && m !== '');
}

/**
 * Network error codes that prove the request never left this machine (no connection was
 * made), so even a non-idempotent POST can be sent again without risk of a double charge.
 */
const NEVER_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export function neverReachedService(err: unknown): boolean {
  const code = errnoCode(err);
  return code !== undefined && NEVER_SENT.has(code);
}

/** A page count as the spec means it: a whole, non-negative number of pages (1e300, -3, 1.5 and "3" are not). */
export function isPageCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
