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
  /** No HTTP answer (refused, reset, timed out), after the retries of an idempotent step. */
  | 'network'
  /** The signed upload address is no longer accepted: ask for a new ticket. */
  | 'ticket_expired'
  /** 404 on a document. */
  | 'not_found'
  /** Another 4xx: the service refused this request as it is (bad file, too large...). */
  | 'rejected'
  /** A 2xx whose body is not what the spec describes. */
  | 'bad_response'
  /** The caller aborted (SIGINT). */
  | 'aborted';

export class ServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly status: number | undefined;
  /** Whether trying the same document again later may succeed (journal: failed.retryable). */
  readonly retryable: boolean;
  constructor(kind: ServiceErrorKind, message: string, options: { status?: number; retryable?: boolean; cause?: unknown } = {}) {
    // Messages quote service bodies and URLs: never let a key or a signature through.
    super(redact(message), { cause: options.cause });
    this.name = 'ServiceError';
    this.kind = kind;
    this.status = options.status;
    this.retryable = options.retryable ?? defaultRetryable(kind);
  }
}

function defaultRetryable(kind: ServiceErrorKind): boolean {
  return kind !== 'rejected' && kind !== 'not_found' && kind !== 'bad_response';
}

/**
 * The spec does not show the shape of error bodies. Read `error` or `message` when the
 * body is JSON that has one (a string, or an object with a message), else a short excerpt.
 */
export function describeErrorBody(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '(empty body)';
  try {
    const body: unknown = JSON.parse(trimmed);
    if (typeof body === 'object' && body !== null) {
      const found = pickMessage(body);
      if (found !== undefined) return redact(found);
    }
  } catch {
    // not JSON: fall through to an excerpt
  }
  const oneLine = trimmed.replace(/\s+/g, ' ');
  return redact(oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine);
}

function pickMessage(body: object): string | undefined {
  for (const key of ['error', 'message', 'detail']) {
    const v: unknown = Reflect.get(body, key);
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'object' && v !== null) {
      const inner: unknown = Reflect.get(v, 'message');
      if (typeof inner === 'string' && inner !== '') return inner;
    }
  }
  return undefined;
}

/**
 * Network error codes that prove the request never left this machine (no connection was
 * made), so even a non-idempotent POST can be sent again without risk of a double charge.
 */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

export function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code: unknown = Reflect.get(e, 'code');
    if (typeof code === 'string') return code;
    e = Reflect.get(e, 'cause');
  }
  return undefined;
}

export function neverReachedService(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && NEVER_SENT.has(code);
}
