import { ErrorAnswer } from '../contract/index.ts';
import { failed, type ServiceErrorKind } from '../cost/attempt.ts';
import type { Charge } from '../cost/charge.ts';
import { errnoCode } from '../errno.ts';
import { inert } from '../inert.ts';
import { redact } from '../redact.ts';

export type { ServiceErrorKind, Charge };

export class ServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly status: number | undefined;
  /** Whether trying the same document again later may succeed (journal: failed.retryable). */
  readonly retryable: boolean;
  /** What the call may have cost. */
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
    // Unless the client's attempt table said otherwise, cost/attempt.ts says what a failure of this kind costs.
    const table = failed(kind);
    this.retryable = options.retryable ?? table.retryable;
    this.charge = options.charge ?? table.charge;
    this.documentId = options.documentId;
    this.pageCount = options.pageCount;
  }
}

/**
 * The spec does not show the shape of error bodies. Read `error` or `message` when the
 * body is JSON that has one (a string, or an object with a message), else a short excerpt.
 */
export function describeErrorBody(text: string): string {
  const found = serviceErrorMessage(text);
  // White space folded to one space first: an excerpt of a page reads as one line, not as escapes.
  const oneLine = (found ?? text).trim().replace(/\s+/g, ' ');
  if (oneLine === '') return found === undefined ? '(empty body)' : '(empty message)';
  return redact(inert(oneLine, EXCERPT_MAX));
}

/** An error body is quoted in a reason that also names the file and what to do: an excerpt. */
const EXCERPT_MAX = 200;

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
