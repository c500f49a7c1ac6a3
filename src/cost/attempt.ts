import type { Charge, UncertainCause } from './charge.ts';

/**
 * The decision table of one attempt of one API call: from what the step was and what came of
 * it, whether the client sends it again now, and if not, how it fails, what it cost and how a
 * later run treats it. Pure: the client reads the answer (client/answers.ts), asks this table
 * (client/service-client.ts), and writes the messages (client/failures.ts).
 */

/** The steps of the API; only extract is not idempotent (it reserves credits). GET is also the poll. */
export type Step = 'upload-url' | 'put' | 'extract' | 'get';

/**
 * Why a call to the service failed, in the words the batch pipeline acts on:
 * - auth: 401/403 from an API operation: the key was rejected. Stops the run (exit 4).
 * - out_of_credits: 402. Stops submitting (exit 3).
 * - inline_unavailable: 503 on the inline route: the inline time limit; the file moves to upload-and-poll.
 * - rate_limited: 429 still returned after the retries.
 * - server: 5xx (other than an inline 503), after the retries of an idempotent step.
 * - network: no HTTP answer (reset, timed out after connecting), or no connection after the retries.
 * - unreachable: the circuit is open: the service has not answered for a while; nothing more is sent this run.
 * - ticket_expired: the signed upload address is no longer accepted: ask for a new ticket.
 * - not_found: 404 on a document.
 * - rejected: another 4xx: the service refused this request as it is (bad file, too large...).
 * - bad_response: a 2xx whose body is not what the spec describes.
 * - wrong_service: the base URL is not the service: a 404 on the API's own paths, an HTML page, or a redirect. Stops the run (exit 2).
 * - no_route: the service answers its API but has no such route (upload-url, documents/{id}): a 404 there
 *   once the API has answered. The document cannot go that way on this service.
 * - aborted: the caller aborted (SIGINT).
 */
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
  'no_route',
  'aborted',
] as const;
export type ServiceErrorKind = (typeof SERVICE_ERROR_KINDS)[number];

/**
 * Kinds that say the service judged this request as it is: the same document fails the same
 * way next time (journal: failed.retryable false).
 */
const JUDGED: ReadonlySet<ServiceErrorKind> = new Set<ServiceErrorKind>([
  'rejected',
  'not_found',
  'bad_response',
  'wrong_service',
  'no_route',
]);

/** Whether trying the same document again later may succeed, unless the failure says otherwise. */
export function retryableKind(kind: ServiceErrorKind): boolean {
  return !JUDGED.has(kind);
}

/** Kinds that stop the whole run: what was not sent is "not submitted", and a rerun sends it. */
const RUN_STOPS = [
  'auth',
  'out_of_credits',
  'unreachable',
  'wrong_service',
] as const satisfies readonly ServiceErrorKind[];
export type RunStop = (typeof RUN_STOPS)[number];

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
      /**
       * The service has answered its API before (in this run, or a free check said so): a 404 on
       * upload-url, or an HTML 404 on documents/{id}, is then a route it lacks, not a wrong address.
       */
      apiAnswered?: boolean | undefined;
      /**
       * A 504 whose text names the hosting platform's function time limit
       * (FUNCTION_INVOCATION_TIMEOUT): the service's own function was stopped, and its reserve is
       * refunded, which is the interface's inline 503, not a proxy that lost the answer.
       */
      functionTimeout?: boolean | undefined;
    }
);

type Answered = Extract<AttemptFacts, { connection: 'answered' }>;

/** What the circuit breaker (client/circuit.ts) hears of an attempt, before it is decided. */
export function circuitSignal(facts: AttemptFacts): 'answered' | 'unanswered' | undefined {
  if (facts.connection !== 'answered') return 'unanswered';
  if (isWrongService(facts)) return undefined;
  return isGatewayStatus(facts.status) && !isFunctionTimeout(facts) ? 'unanswered' : 'answered';
}

/**
 * How a later run treats a document whose call failed: `on-rerun` a plain rerun sends it again,
 * `with-retry-failed` only a person's --retry-failed does (it may have been charged, or the
 * service judged it). (`now`: the client sends it again within this run.)
 */
export type Retry = 'now' | 'on-rerun' | 'with-retry-failed';

/** The call failed for good, this run: how, what it cost, whether the same document may pass later. */
export type Failure = { retry: Exclude<Retry, 'now'>; charge: Charge; kind: ServiceErrorKind; retryable: boolean };

/**
 * `rateLimited`: the service refused the attempt for its rate (a 429), which the client's
 * rate-limit hook hears, whether it is sent again or fails.
 */
export type Decision =
  /** The call succeeded. */
  | { ok: true; charge: Charge; rateLimited: false; retry?: undefined; kind?: undefined }
  /** Send the same request again after the backoff (or the Retry-After). */
  | { ok: false; retry: 'now'; charge: 'none'; rateLimited: boolean; kind?: undefined }
  | (Failure & { ok: false; rateLimited: boolean });

type Verdict = 'now' | { charge: Charge } | Failure;

/** The table. `circuitOpened`: the circuit breaker opened on this attempt (circuitSignal said `unanswered`). */
export function decide(facts: AttemptFacts, circuitOpened = false): Decision {
  const verdict = verdictOf(facts, circuitOpened);
  const rateLimited = facts.connection === 'answered' && facts.status === 429 && !isWrongService(facts);
  if (verdict === 'now') return { ok: false, retry: 'now', charge: 'none', rateLimited };
  if ('kind' in verdict) return { ...verdict, ok: false, rateLimited };
  return { ok: true, charge: verdict.charge, rateLimited: false };
}

function verdictOf(facts: AttemptFacts, circuitOpened: boolean): Verdict {
  const last = facts.attempt >= facts.attempts;
  const idempotent = facts.step !== 'extract';
  if (facts.connection !== 'answered') {
    // Not sent again so that it cannot be charged twice: a person resends it under the same key.
    if (!idempotent && facts.connection === 'no-answer') return failed('network', 'uncertain');
    if (circuitOpened) return failed('unreachable');
    return last ? failed('network') : 'now';
  }
  const { status } = facts;
  if (isMissingRoute(facts)) return failed('no_route');
  if (isWrongService(facts)) return failed('wrong_service');
  if (isFunctionTimeout(facts)) return failed('inline_unavailable');
  if (circuitOpened && idempotent && isGatewayStatus(status)) return failed('unreachable');
  if (status >= 200 && status < 300) {
    if (facts.body === 'unreadable') return unreadableAnswer(facts.step);
    return { charge: idempotent ? 'none' : 'charged' };
  }
  if (status === 429) {
    // A refusal before any work, so even POST extract is safe to send again.
    return !last && facts.pastDeadline !== true ? 'now' : failed('rate_limited');
  }
  // For the idempotent steps any 5xx is transient. POST extract is sent again only after the
  // service's own 500 (a JSON error body: the spec says the extraction failed and was refunded)
  // or its own 503 on the storage-path shape; never after a gateway's answer.
  const refusedByService =
    (status === 500 || (status === 503 && facts.inline !== true)) && facts.body === 'service-error';
  if (status >= 500 && (idempotent || refusedByService) && !last) return 'now';
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
  // A redirect is never followed with the key: the base URL to use is the one it names.
  if (facts.status >= 300 && facts.status < 400) return true;
  if (isMissingRoute(facts)) return false;
  return facts.html === true || (facts.status === 404 && (facts.step === 'upload-url' || facts.inline === true));
}

/**
 * A route the service lacks: once its API has answered, a 404 on upload-url, or the framework's
 * HTML 404 page for documents/{id} (an unknown document is the API's own answer, not a page).
 * A service deployed with the inline extract alone answers both so.
 */
function isMissingRoute(facts: Answered): boolean {
  if (facts.apiAnswered !== true || facts.status !== 404) return false;
  return facts.step === 'upload-url' || (facts.step === 'get' && facts.html === true);
}

/** The inline extract stopped by the hosting platform's time limit (AttemptFacts functionTimeout). */
function isFunctionTimeout(facts: Answered): boolean {
  return facts.inline === true && facts.status === 504 && facts.functionTimeout === true;
}

/** A 2xx whose body is not what the spec describes. To POST extract: the service accepted it, so it may be charged. */
export function unreadableAnswer(step: Step): Failure {
  return failed('bad_response', step === 'extract' ? 'uncertain' : 'none');
}

/** A failure of this kind and charge, with how a later run treats it. */
export function failed(kind: ServiceErrorKind, charge: Charge = 'none', retryable = retryableKind(kind)): Failure {
  return { retry: laterRetry(kind, charge, retryable), charge, kind, retryable };
}

/**
 * The failure ends this run (it stopped the run, or the caller aborted): what the run had not
 * sent was never sent, so it is "not submitted", and the next run sends it.
 */
function endsTheRun(kind: ServiceErrorKind): boolean {
  return stopsTheRun(kind) !== undefined || kind === 'aborted';
}

/** How a later run treats a failure (see Retry). */
export function laterRetry(kind: ServiceErrorKind, charge: Charge, retryable: boolean): Exclude<Retry, 'now'> {
  return endsTheRun(kind) ? 'on-rerun' : rerunOf({ charge, retryable });
}

/**
 * How a later run treats a failure the journal holds (a run's end is never journaled as a
 * failure): one that cost nothing and may pass next time (the service was down, rate limiting,
 * failing with its own 500) is sent by a plain rerun, so a cron job heals; any other waits
 * for --retry-failed.
 */
export function rerunOf(failure: { charge: Charge; retryable: boolean }): Exclude<Retry, 'now'> {
  // A refunded failure that may pass (the service's extraction failed, not the document judged)
  // costs nothing net either: a plain rerun sends it again (cost/charge.ts failureOutcome says once).
  return (failure.charge === 'none' || failure.charge === 'refunded') && failure.retryable
    ? 'on-rerun'
    : 'with-retry-failed';
}

/** How an extract request that may have reached the service was left without its outcome, by the kind of its failure. */
export function uncertainCause(kind: ServiceErrorKind | undefined): UncertainCause | undefined {
  if (kind === 'network') return 'connection';
  if (kind === 'server') return 'gateway';
  if (kind === 'bad_response') return 'answer_refused';
  return undefined;
}

/**
 * What the pipeline does with a document whose call failed for good (the extract request was
 * not left uncertain): `not-submitted` when the run ends before the document was sent (a rerun
 * sends it); `pending-at-stop` when the run ends after it was submitted, and `pending` when a
 * poll failed: the service holds its document and a rerun collects it, never paying again;
 * `failed` otherwise (a 404 on the document says the service does not hold it).
 */
export function afterFailure(
  kind: ServiceErrorKind,
  documentId: string | null,
): 'not-submitted' | 'pending-at-stop' | 'pending' | 'failed' {
  if (endsTheRun(kind)) return documentId === null ? 'not-submitted' : 'pending-at-stop';
  return documentId !== null && kind !== 'not_found' ? 'pending' : 'failed';
}

/**
 * What a probe's GET of a document (batch/plan/probe.ts) says of the key: `unseen` the key does not
 * see the document (404, or 403: the spec scopes a key to one parser, so another parser's
 * document is forbidden to it, which elsewhere is a rejected key), `key-rejected` the service
 * rejected the key (401), `unsettled` no answer that settles it (no connection, a 5xx).
 */
export function probeAnswer(failure: {
  kind: ServiceErrorKind;
  status?: number | undefined;
}): 'unseen' | 'key-rejected' | 'unsettled' {
  if (failure.kind === 'not_found' || failure.status === 403 || failure.status === 404) return 'unseen';
  return failure.kind === 'auth' ? 'key-rejected' : 'unsettled';
}
