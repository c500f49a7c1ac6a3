import type { Charge } from './charge.ts';

/**
 * The decision table of one attempt of one API call: from what the step was and what came of
 * it, whether the client sends it again now, and if not, how it fails, what it cost and how a
 * later run treats it. Pure: the client (client/service-client.ts) reads the answer, asks this
 * table, and writes the messages.
 */

/** The steps of the API; only extract is not idempotent (it reserves credits). GET is also the poll. */
export type Step = 'upload-url' | 'put' | 'extract' | 'get';

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

/** Every kind, for tables and tests. */
export const SERVICE_ERROR_KINDS = [
  'auth',
  'out_of_credits',
  'inline_unavailable',
  'rate_limited',
  'server',
  'network',
  'unreachable',
  'ticket_expired',
  'not_found',
  'rejected',
  'bad_response',
  'wrong_service',
  'aborted',
] as const satisfies readonly ServiceErrorKind[];

/**
 * Kinds that say the service judged this request as it is: the same document fails the same
 * way next time (journal: failed.retryable false).
 */
const JUDGED: ReadonlySet<ServiceErrorKind> = new Set<ServiceErrorKind>([
  'rejected',
  'not_found',
  'bad_response',
  'wrong_service',
]);

/** Whether trying the same document again later may succeed, unless the failure says otherwise. */
export function retryableKind(kind: ServiceErrorKind): boolean {
  return !JUDGED.has(kind);
}

/** Kinds that stop the whole run: what was not sent is "not submitted", and a rerun sends it. */
export type RunStop = 'auth' | 'out_of_credits' | 'unreachable' | 'wrong_service';

const RUN_STOPS: readonly RunStop[] = ['auth', 'out_of_credits', 'unreachable', 'wrong_service'];

/** The reason this failure stops the run, if it does. */
export function stopsTheRun(kind: ServiceErrorKind): RunStop | undefined {
  return RUN_STOPS.find((stop) => stop === kind);
}

/** Statuses a proxy in front of the service answers when the service itself did not. */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 504]);

/** A proxy's answer for a service that did not answer (the circuit counts it as no answer). */
export function isGatewayStatus(status: number): boolean {
  return GATEWAY_STATUSES.has(status);
}

/**
 * A storage-path extract refused because the service does not know (404) or no longer has (410)
 * the uploaded file: refused before any charge, so the pipeline uploads it again.
 */
export function uploadAgain(status: number | undefined): boolean {
  return status === 404 || status === 410;
}

/** Statuses the storage answers a PUT with when its signed address is no longer good. */
const TICKET_REFUSALS: ReadonlySet<number> = new Set([401, 403, 404, 410]);

/**
 * What came of one attempt. `connection`: `never` when the request provably never left this
 * machine (client/errors.ts neverReachedService), `no-answer` when it may have reached the
 * service (a reset, a time-out after connecting), `answered` with a status.
 */
export type AttemptFacts = {
  step: Step;
  /** The inline extract, whose 503 (and 413) sends the file to upload-and-poll. */
  inline?: boolean | undefined;
  /** 1 for the first attempt. */
  attempt: number;
  /** The retry policy's attempts: the last may not ask for another. */
  attempts: number;
} & (
  | { connection: 'never' | 'no-answer' }
  | {
      connection: 'answered';
      status: number;
      /**
       * The body: `service-error` a JSON error of the service's own (client/errors.ts
       * serviceErrorMessage), `unreadable` a 2xx the client could not take, `other` anything else.
       */
      body: 'service-error' | 'unreadable' | 'other';
      /** Served as an HTML page, which the API never sends. */
      html?: boolean | undefined;
      /** The answer's text says the upload address expired. */
      saysExpired?: boolean | undefined;
      /** Its Retry-After asks for a wait beyond the longest this client honours. */
      pastDeadline?: boolean | undefined;
    }
);

type Answered = Extract<AttemptFacts, { connection: 'answered' }>;

/** What the circuit breaker (client/circuit.ts) hears of an attempt, before it is decided. */
export function circuitSignal(facts: AttemptFacts): 'answered' | 'unanswered' | undefined {
  if (facts.connection !== 'answered') return 'unanswered';
  if (isWrongService(facts)) return undefined;
  return isGatewayStatus(facts.status) ? 'unanswered' : 'answered';
}

/**
 * How a later run treats a document whose call failed: `on-rerun` a plain rerun sends it again,
 * `with-retry-failed` only a person's --retry-failed does (it may have been charged, or the
 * service judged it), `never` it is fetched by its document_id and not sent again.
 */
export type Retry = 'now' | 'on-rerun' | 'with-retry-failed' | 'never';

/** The call failed for good, this run: how, what it cost, whether the same document may pass later. */
export type Failure = { retry: Exclude<Retry, 'now'>; charge: Charge; kind: ServiceErrorKind; retryable: boolean };

export type Decision =
  /** Send the same request again after the backoff (or the Retry-After). */
  | { retry: 'now'; charge: 'none'; kind?: undefined }
  /** The call succeeded. */
  | { retry: 'never'; charge: Charge; kind?: undefined }
  | Failure;

const AGAIN_NOW: Decision = { retry: 'now', charge: 'none' };

/** The table. `circuitOpened`: the circuit breaker opened on this attempt (circuitSignal said `unanswered`). */
export function decide(facts: AttemptFacts, circuitOpened = false): Decision {
  const last = facts.attempt >= facts.attempts;
  const idempotent = facts.step !== 'extract';
  if (facts.connection !== 'answered') {
    // Not sent again so that it cannot be charged twice: a person resends it under the same key.
    if (!idempotent && facts.connection === 'no-answer') return failed('network', 'uncertain');
    if (circuitOpened) return failed('unreachable');
    return last ? failed('network') : AGAIN_NOW;
  }
  const { status } = facts;
  if (isWrongService(facts)) return failed('wrong_service');
  if (circuitOpened && idempotent && isGatewayStatus(status)) return failed('unreachable');
  if (status >= 200 && status < 300) {
    if (facts.body === 'unreadable') return unreadableAnswer(facts.step);
    return { retry: 'never', charge: idempotent ? 'none' : 'charged' };
  }
  if (status === 429) {
    // A refusal before any work, so even POST extract is safe to send again.
    return !last && facts.pastDeadline !== true ? AGAIN_NOW : failed('rate_limited');
  }
  // For the idempotent steps any 5xx is transient. POST extract is sent again only after the
  // service's own 500 (a JSON error body: the spec says the extraction failed and was refunded)
  // or its own 503 on the storage-path shape; never after a gateway's answer.
  const refusedByService =
    (status === 500 || (status === 503 && facts.inline !== true)) && facts.body === 'service-error';
  if (status >= 500 && (idempotent || refusedByService) && !last) return AGAIN_NOW;
  return classify(facts, status, refusedByService);
}

function classify(facts: Answered, status: number, refusedByService: boolean): Failure {
  if (facts.step === 'put' && (TICKET_REFUSALS.has(status) || facts.saysExpired === true))
    return failed('ticket_expired');
  if (status === 401 || status === 403) return failed('auth');
  if (status === 402) return failed('out_of_credits');
  if (facts.inline === true && (status === 503 || status === 413)) return failed('inline_unavailable');
  if (status === 404) return failed('not_found');
  // A gateway's answer (or a 500 that is not the service's own JSON): the request may have been handled.
  if (status >= 500) return failed('server', facts.step === 'extract' && !refusedByService ? 'uncertain' : 'none');
  return failed('rejected');
}

/**
 * A base URL that is not the service: a 404 on a path of the API that names no resource
 * (upload-url, the inline extract), or an HTML page, which the API never sends. A proxy's 5xx
 * page is not this: it is the service being down (the circuit's business). A 404 of GET
 * documents/{id} is an unknown document, and one of a storage-path extract an expired upload:
 * both legitimate answers of the service.
 */
function isWrongService(facts: Answered): boolean {
  if (facts.step === 'put' || facts.status >= 500) return false;
  return facts.html === true || (facts.status === 404 && (facts.step === 'upload-url' || facts.inline === true));
}

/** A 2xx whose body is not what the spec describes. To POST extract: the service accepted it, so it may be charged. */
export function unreadableAnswer(step: Step): Failure {
  return failed('bad_response', step === 'extract' ? 'uncertain' : 'none');
}

/** A failure of this kind and charge, with how a later run treats it. */
export function failed(kind: ServiceErrorKind, charge: Charge = 'none', retryable = retryableKind(kind)): Failure {
  return { retry: laterRetry(kind, charge, retryable), charge, kind, retryable };
}

/** How a later run treats a failure (see Retry). */
export function laterRetry(kind: ServiceErrorKind, charge: Charge, retryable: boolean): Exclude<Retry, 'now'> {
  // A run stopped by it never sent what was left: "not submitted", sent by the next run.
  if (stopsTheRun(kind) !== undefined || kind === 'aborted') return 'on-rerun';
  if (charge === 'none' && retryable) return 'on-rerun';
  return 'with-retry-failed';
}
