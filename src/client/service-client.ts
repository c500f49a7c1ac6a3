import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import { z } from 'zod';
import {
  API_PREFIX,
  DocumentBody,
  describeZodErrorInline,
  ExtractAcceptedResponse,
  ExtractInlineResponse,
  UploadTicket,
  type ExtractInlineRequest,
  type ExtractStoredRequest,
  type UploadUrlRequest,
} from '../contract/index.ts';
import { redact, rememberSecret } from '../redact.ts';
import { backoffDelay, DEFAULT_RETRY, parseRetryAfter, type RetryPolicy } from './backoff.ts';
import type { ClientDeps, LogLevel } from './deps.ts';
import { errnoCode } from '../errno.ts';
import {
  type AttemptFacts,
  decide,
  type Failure,
  type Step,
  circuitSignal,
  unreadableAnswer,
} from '../cost/attempt.ts';
import type { Circuit } from './circuit.ts';
import { FileChangedError, hashedFileBody } from './upload-body.ts';
import { requestUrl } from '../net/request.ts';
import { MAX_ANSWER_DEPTH, nestsDeeperThan, topLevelScalars } from './answer-depth.ts';
import { describeErrorBody, isPageCount, neverReachedService, serviceErrorMessage, ServiceError } from './errors.ts';
import { ServiceOffers } from './offers.ts';

/**
 * Response shapes as the client accepts them: the contract's schemas, loosened where the
 * spec says "not shown" so a real service that omits a field still works. Extra keys pass.
 */
const AcceptedExtract = ExtractAcceptedResponse.partial({ success: true, status: true, poll_url: true });
// Loose: a page_count beside the results (not in the spec) saves a GET when present.
const InlineExtract = ExtractInlineResponse.partial({ parser_id: true }).loose();
const FetchedDocument = DocumentBody.partial({ file_name: true, page_count: true, results: true, error: true });

export type InlineResult = z.infer<typeof InlineExtract>;
export type AcceptedResult = z.infer<typeof AcceptedExtract>;
/** A document as GET returns it, with the fields the service may omit filled with null. */
export type FetchedDocument = DocumentBody;

/** Callbacks the batch pipeline uses for AIMD: 429s lower its concurrency, successes raise it. */
export type ClientHooks = { rateLimited?: () => void; succeeded?: () => void };

export type ServiceClientOptions = {
  baseUrl: string;
  apiKey: string;
  retry?: RetryPolicy;
  hooks?: ClientHooks;
  /** Shared by every call of a run: when the service stops answering, stop sending. */
  circuit?: Circuit | undefined;
  /** Per-attempt limits (defaults REQUEST_TIMEOUT_MS, EXTRACT_TIMEOUT_MS) and the largest answer read (MAX_ANSWER_BYTES). */
  limits?: { requestMs?: number; extractMs?: number; answerBytes?: number };
  /** What the service is known to offer (the journal's), added to as the client learns it. */
  offers?: ServiceOffers | undefined;
};

/** Failures only the service's API answers: after one, a 404 page elsewhere is a missing route, not a wrong address. */
const SHOWS_THE_API: ReadonlySet<string> = new Set([
  'auth',
  'out_of_credits',
  'not_found',
  'rejected',
  'inline_unavailable',
  'ticket_expired',
]);

/** The file a PUT streams: read from disk on every attempt, so a retry never resends a spent stream. */
export type UploadSource = {
  /** Bytes for a name that is not UTF-8 (batch/paths.ts); or the descriptor the caller read the file through. */
  path: string | Buffer | FileHandle;
  /** The file's name in messages. */
  name: string;
  size: number;
  type: string;
};

type Call = {
  step: Step;
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  /** Built again for each attempt: a consumed stream cannot be sent twice. */
  body?: () => string | Readable;
  /** The inline extract, whose 503 (and 413) sends the file to upload-and-poll. */
  inline?: boolean;
  /** The body's size in bytes, for what a 413 teaches (offers.ts refusedInline). */
  bodyBytes?: number;
  /** What the step concerns, for messages ("invoice-1.pdf"). */
  subject: string;
  signal?: AbortSignal | undefined;
};

type Answer = { status: number; text: string; headers: IncomingHttpHeaders };

/** What one attempt came to: the answer, or a retry (why, at which log level, and the Retry-After to honour). */
type Attempt = { answer: Answer } | { why: string; level: LogLevel; atLeastMs?: number };

export class ServiceClient {
  readonly baseUrl: string;
  /** What this service offers, as learnt (client/offers.ts). */
  readonly offers: ServiceOffers;
  readonly #apiKey: string;
  readonly #retry: RetryPolicy;
  readonly #hooks: ClientHooks;
  readonly #deps: ClientDeps;
  readonly #circuit: Circuit | undefined;
  readonly #limits: { requestMs: number; extractMs: number; answerBytes: number };
  /** The base URL as logs show it (describeUrl), worked out once rather than per request. */
  readonly #shownBase: string;
  /**
   * Until the service has answered once, one API request at a time: a base URL that is not the
   * service is then found by one request, not by one per file sent at once (wrongService).
   */
  #verified = false;
  #probe: Promise<unknown> | undefined;
  #wrong: ServiceError | undefined;

  constructor(options: ServiceClientOptions, deps: ClientDeps) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#shownBase = describeUrl(this.baseUrl).replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    // Wherever the key shows up again (a service that echoes it in an error), it is redacted by value.
    rememberSecret(options.apiKey);
    this.#retry = options.retry ?? DEFAULT_RETRY;
    this.#limits = {
      requestMs: REQUEST_TIMEOUT_MS,
      extractMs: EXTRACT_TIMEOUT_MS,
      answerBytes: MAX_ANSWER_BYTES,
      ...options.limits,
    };
    this.#hooks = options.hooks ?? {};
    this.#deps = deps;
    this.#circuit = options.circuit;
    this.offers = options.offers ?? new ServiceOffers();
  }

  /** Operation 1: a signed, short-lived upload address. */
  async uploadUrl(body: UploadUrlRequest, signal?: AbortSignal): Promise<UploadTicket> {
    if (this.offers.noUpload)
      throw new ServiceError('no_route', `${body.file_name}: the service at ${this.#shownBase} has no upload route`, {
        status: 404,
      });
    const answer = await this.#call({
      step: 'upload-url',
      method: 'POST',
      url: `${this.baseUrl}${API_PREFIX}/upload-url`,
      headers: this.#jsonHeaders(),
      body: () => JSON.stringify(body),
      subject: body.file_name,
      signal,
    });
    const ticket = parseBody(UploadTicket, answer, 'upload-url', body.file_name);
    // A service with an upload route reads its documents: a 404 page on documents/{id} was not its.
    this.offers.documentsAfterAll(this.#shownBase);
    return ticket;
  }

  /**
   * Operation 2: the raw bytes, streamed from disk in constant memory (a small ring of reused
   * buffers) and hashed on the way. No Authorization header: the signed address is the
   * credential, and the key must not reach storage. Returns the sha256 of the bytes sent
   * (undefined if the storage answered before it read them all).
   */
  async putBytes(
    ticket: UploadTicket,
    source: UploadSource,
    signal?: AbortSignal,
  ): Promise<{ sha256: string | undefined }> {
    let attempt: ReturnType<typeof hashedFileBody> | undefined;
    await this.#call({
      step: 'put',
      method: 'PUT',
      // Tolerate a relative upload_url; the spec only promises "an address".
      url: new URL(ticket.upload_url, `${this.baseUrl}/`).toString(),
      headers: { 'content-type': source.type, 'content-length': String(source.size) },
      body: () => {
        // Each attempt reads (and hashes) the file again: a spent body cannot be resent.
        attempt = hashedFileBody(source.path, source.size, source.name);
        return attempt.body;
      },
      subject: source.name,
      signal,
    });
    return { sha256: attempt?.digest() };
  }

  /**
   * Operation 3a: base64 in the body, the result in the same response. Never retried once sent.
   * `idempotencyKey` (not in the spec; the emulator honours it, the real service may ignore it)
   * lets a later resend of the same request be answered with the first document, uncharged.
   */
  async extractInline(body: ExtractInlineRequest, idempotencyKey?: string): Promise<InlineResult> {
    const answer = await this.#postExtract(body, idempotencyKey, body.file.name, true);
    const refused = failedExtraction(answer, body.file.name);
    if (refused !== undefined) throw refused;
    return parseBody(InlineExtract, answer, 'extract', body.file.name);
  }

  /** Operation 3b: submit a storage path; always asynchronous. Never retried once sent. */
  async extractStored(body: ExtractStoredRequest, idempotencyKey?: string): Promise<AcceptedResult> {
    const subject = body.file_name ?? body.storage_path;
    const answer = await this.#postExtract(body, idempotencyKey, subject, false);
    return parseBody(AcceptedExtract, answer, 'extract', subject);
  }

  /** POST extract, either shape: never retried once it may have reached the service. */
  #postExtract(
    body: ExtractInlineRequest | ExtractStoredRequest,
    idempotencyKey: string | undefined,
    subject: string,
    inline: boolean,
  ) {
    const text = JSON.stringify(body);
    const bodyBytes = Buffer.byteLength(text);
    return this.#call({
      step: 'extract',
      method: 'POST',
      url: `${this.baseUrl}${API_PREFIX}/extract`,
      headers: this.#extractHeaders(idempotencyKey),
      body: () => text,
      ...(inline && { inline: true, bodyBytes }),
      subject,
    });
  }

  /** Operation 4: one document, to poll or to recover a result. */
  async getDocument(documentId: string, signal?: AbortSignal): Promise<FetchedDocument> {
    if (this.offers.noDocuments)
      throw new ServiceError(
        'no_route',
        `${documentId}: the service at ${this.#shownBase} has no route to read a document`,
        {
          status: 404,
        },
      );
    const answer = await this.#call({
      step: 'get',
      method: 'GET',
      url: `${this.baseUrl}${API_PREFIX}/documents/${encodeURIComponent(documentId)}`,
      headers: { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json' },
      subject: documentId,
      signal,
    });
    const doc = parseBody(FetchedDocument, answer, 'get', documentId);
    return {
      ...doc,
      file_name: doc.file_name ?? '',
      page_count: doc.page_count ?? null,
      results: doc.results ?? null,
      error: doc.error ?? null,
    };
  }

  #jsonHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.#apiKey}`, 'content-type': 'application/json', accept: 'application/json' };
  }

  #extractHeaders(idempotencyKey: string | undefined): Record<string, string> {
    return idempotencyKey === undefined
      ? this.#jsonHeaders()
      : { ...this.#jsonHeaders(), 'idempotency-key': idempotencyKey };
  }

  /**
   * One request with its retries. Each attempt either answers, fails for good (throws), or
   * asks for a retry; the retry step (log why, wait the backoff or the Retry-After, try
   * again) is written once, here.
   */
  async #call(call: Call): Promise<Answer> {
    if (call.step === 'put' || this.#verified) return this.#retrying(call);
    while (this.#probe !== undefined) {
      await this.#probe.catch(() => {});
      if (this.#wrong !== undefined) throw this.#wrong;
      if (this.#verified) return this.#retrying(call);
    }
    const probe = this.#retrying(call);
    this.#probe = probe;
    try {
      const answer = await probe;
      this.#verified = true;
      return answer;
    } catch (err) {
      if (err instanceof ServiceError && err.kind === 'wrong_service') this.#wrong = err;
      // Only the API's own refusals show it is the service; a proxy's 5xx or 429 answers for anything.
      else if (err instanceof ServiceError && SHOWS_THE_API.has(err.kind)) this.#verified = true;
      throw err;
    } finally {
      this.#probe = undefined;
    }
  }

  async #retrying(call: Call): Promise<Answer> {
    const { sleep, random, log } = this.#deps;
    const label = `${call.method} ${this.#shown(call.url)}`;
    const circuit = this.#circuit;
    // A backoff delay ends early when the caller aborts or the circuit opens.
    const waitSignal = circuit
      ? call.signal
        ? AbortSignal.any([call.signal, circuit.signal])
        : circuit.signal
      : call.signal;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#attempt(call, label, attempt);
      if ('answer' in outcome) return outcome.answer;
      const delay = Math.max(outcome.atLeastMs ?? 0, backoffDelay(attempt, random, this.#retry));
      log(
        outcome.level,
        `${label}: ${outcome.why}; retrying in ${delay} ms (attempt ${attempt + 1} of ${this.#retry.attempts})`,
      );
      await sleep(delay, waitSignal);
    }
  }

  /**
   * One attempt of `call`: its answer, a retry with the reason, or a thrown ServiceError. What
   * to do with what came of it is cost/attempt.ts's table; this reads the answer and says why.
   */
  async #attempt(call: Call, label: string, attempt: number): Promise<Attempt> {
    const { now, log } = this.#deps;
    if (call.signal?.aborted) throw new ServiceError('aborted', `${label}: stopped`);
    if (this.#circuit?.isOpen) throw this.#unreachable();
    const shape = { step: call.step, inline: call.inline, attempt, attempts: this.#retry.attempts };
    const started = now();
    let answer: Answer;
    try {
      answer = await this.#send(call);
    } catch (err) {
      if (call.signal?.aborted) throw new ServiceError('aborted', `${label}: stopped`, { cause: err });
      // The file, not the service: sent again it fails again, and the circuit must not call the service down.
      if (err instanceof FileChangedError) throw err;
      const code = errnoCode(err) ?? (err instanceof Error ? err.name : 'error');
      log('debug', `${label} -> ${code} (${now() - started} ms)`);
      const facts: AttemptFacts = { ...shape, connection: neverReachedService(err) ? 'never' : 'no-answer' };
      const decision = decide(facts, this.#heard(facts, code));
      // No connection is a line for -v only: a blip heals unseen, an outage opens the circuit, which says so once.
      if (decision.kind === undefined) return { why: code, level: facts.connection === 'never' ? 'debug' : 'warn' };
      throw this.#failure(call, label, decision, { attempt, code, cause: err });
    }
    const { status, text, headers } = answer;
    log('debug', `${label} -> ${status} (${now() - started} ms)`);
    const wait = parseRetryAfter(headers['retry-after'], now());
    const html = /^\s*text\/html\b/i.test(String(headers['content-type'] ?? ''));
    const facts: AttemptFacts = {
      ...shape,
      connection: 'answered',
      status,
      // Read only where the table asks (a 5xx, a PUT refused): a success's body is parsed once, by parseBody.
      body: status >= 500 && serviceErrorMessage(text) !== undefined ? 'service-error' : 'other',
      html,
      saysExpired: call.step === 'put' && status >= 300 && /expire/i.test(describeErrorBody(text)),
      pastDeadline: wait !== undefined && wait > this.#retry.maxRetryAfterMs,
      apiAnswered: this.#verified || (maybeMissingRoute(call.step, status, html) && (await this.#apiAnswers())),
      functionTimeout: status === 504 && FUNCTION_TIMEOUT.test(text),
    };
    const decision = decide(facts, this.#heard(facts, `HTTP ${status}`));
    if (decision.rateLimited) this.#hooks.rateLimited?.();
    if (decision.ok) {
      this.#hooks.succeeded?.();
      return { answer };
    }
    if (decision.retry === 'now')
      return decision.rateLimited
        ? { why: '429 rate limited', level: 'warn', ...(wait !== undefined && { atLeastMs: wait }) }
        : { why: String(status), level: 'warn' };
    if (decision.kind === 'no_route')
      this.offers.missingRoute(call.step === 'get' ? 'documents' : 'upload', this.#shownBase);
    if (decision.kind === 'inline_unavailable' && status === 413 && call.bodyBytes !== undefined)
      this.offers.refusedInline(call.bodyBytes, this.#shownBase);
    throw this.#failure(call, label, decision, {
      attempt,
      status,
      detail: describeErrorBody(text),
      html: facts.html,
      location: headers.location === undefined ? undefined : String(headers.location),
    });
  }

  /**
   * Whether the base URL answers as the service's API, asked at no cost when the first API request
   * met a 404 where a route of the interface should be: an extract request with no file, which no
   * service can charge, answered by the API's own JSON error (a 400, a 401) rather than a page or
   * a 404. No answer settles nothing: the 404 then stands as a wrong address.
   */
  async #apiAnswers(): Promise<boolean> {
    const url = `${this.baseUrl}${API_PREFIX}/extract`;
    try {
      const { status, text, headers } = await this.#send({
        step: 'extract',
        method: 'POST',
        url,
        headers: this.#jsonHeaders(),
        body: () => '{}',
        subject: 'a request with no file',
      });
      this.#deps.log('debug', `POST ${this.#shown(url)} with no file -> ${status}`);
      const html = /^\s*text\/html\b/i.test(String(headers['content-type'] ?? ''));
      return status >= 400 && status !== 404 && status < 500 && !html && serviceErrorMessage(text) !== undefined;
    } catch {
      return false;
    }
  }

  /** Tells the circuit breaker what came of an attempt; whether that opened it. */
  #heard(facts: AttemptFacts, cause: string): boolean {
    const signal = circuitSignal(facts);
    if (signal === 'unanswered') return this.#circuit?.unanswered(cause) === true;
    if (signal === 'answered') this.#circuit?.answered();
    return false;
  }

  /** The error of a failed call, in words a person can act on; its kind and charge are the table's. */
  #failure(
    call: Call,
    label: string,
    decision: Failure,
    got: {
      attempt: number;
      code?: string;
      cause?: unknown;
      status?: number;
      detail?: string;
      html?: boolean;
      location?: string | undefined;
    },
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
        return this.#unreachable();
      case 'wrong_service':
        return status !== undefined && status >= 300 && status < 400
          ? redirected(status, label, this.baseUrl, got.location)
          : wrongService(status, label, this.baseUrl, got.html === true);
      case 'no_route':
        return new ServiceError(
          kind,
          call.step === 'get'
            ? `${call.subject}: the service at ${this.#shownBase} has no route to read a document (HTTP 404)`
            : `${call.subject}: the service at ${this.#shownBase} has no upload route (HTTP 404)`,
          options,
        );
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

  /**
   * The request itself, under its per-attempt time limit; the answer read up to the cap. undici's
   * own timers bound the wait for the answer's headers and any silence in its body, and one timer
   * the body's whole read (a slow drip): no AbortSignal per request, whose set-up and listeners
   * were a tenth of the client's CPU on small files.
   */
  async #send(call: Call): Promise<Answer> {
    // A GET or an upload-url is small: one that drips for longer than this is cut and retried.
    const limitMs =
      call.method === 'PUT' ? undefined : call.step === 'extract' ? this.#limits.extractMs : this.#limits.requestMs;
    const started = performance.now();
    const res = await requestUrl(
      call.url,
      {
        method: call.method,
        headers: call.headers,
        body: call.body?.() ?? null,
        signal: call.signal ?? null,
        ...(limitMs !== undefined && { headersTimeout: limitMs, bodyTimeout: limitMs }),
      },
      this.#deps.dispatcher,
    );
    const timeLeft = limitMs === undefined ? undefined : limitMs - (performance.now() - started);
    const text = await readCapped(res.body, this.#limits.answerBytes, timeLeft);
    return { status: res.statusCode, headers: res.headers, text };
  }

  /** A request's URL for logs: the API's own paths after the base shown once; any other URL (an upload address) described whole. */
  #shown(url: string): string {
    const rest = url.slice(this.baseUrl.length);
    return url.startsWith(this.baseUrl) && /^\/[\w./-]*$/.test(rest) ? this.#shownBase + rest : describeUrl(url);
  }

  #unreachable(): ServiceError {
    return new ServiceError(
      'unreachable',
      `the service at ${this.baseUrl} is not answering (${this.#circuit?.describe() ?? 'no answer'}): stopped sending; ` +
        'check that it is up and that the base URL is right, then rerun the same command (nothing unsent was charged)',
    );
  }
}

/** The largest answer the client reads: a result is kilobytes; a hostile or broken server's 300 MB is refused. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** Per attempt, for the small requests (upload-url, GET document): a slow drip is cut here and retried. */
export const REQUEST_TIMEOUT_MS = 60_000;
/** Per attempt of POST extract: longer, since an inline extraction answers when it is done. */
const EXTRACT_TIMEOUT_MS = 300_000;

/**
 * A body read up to `limit` bytes and within `timeLeftMs`; beyond either, the read stops (the
 * connection is dropped) and the answer is an error. Events, not an async iterator: cheaper for
 * the one or two chunks of a typical answer.
 */
function readCapped(body: Readable, limit: number, timeLeftMs: number | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer =
      timeLeftMs === undefined
        ? undefined
        : setTimeout(
            () => body.destroy(answerError('EXTRACT_ANSWER_TIMEOUT', 'the answer did not arrive in time')),
            Math.max(0, timeLeftMs),
          ).unref();
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) body.destroy(answerError('EXTRACT_ANSWER_TOO_LARGE', `the answer is over ${limit} bytes`));
      else chunks.push(chunk);
    });
    body.once('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    });
    body.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function answerError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The answer's body, read as the contract says. A body too deep to hold, not JSON, of the wrong
 * shape, or whose page_count is not a number of pages is a bad answer; when it still names its
 * document (and pages), the error carries them, so the journal keeps what was charged.
 */
function parseBody<T extends z.ZodType>(schema: T, answer: Answer, step: Step, subject: string): z.infer<T> {
  const bad = (what: string, named: Record<string, unknown> = {}): ServiceError => {
    const documentId = step === 'get' ? subject : named.document_id;
    return new ServiceError('bad_response', `${step} for ${subject}: HTTP ${answer.status} with ${what}`, {
      status: answer.status,
      charge: unreadableAnswer(step).charge,
      documentId: typeof documentId === 'string' && documentId !== '' ? documentId : undefined,
      pageCount: isPageCount(named.page_count) ? named.page_count : undefined,
    });
  };
  if (nestsDeeperThan(answer.text, MAX_ANSWER_DEPTH)) {
    throw bad(
      `results nested deeper than ${MAX_ANSWER_DEPTH} levels, which no document needs`,
      topLevelScalars(answer.text),
    );
  }
  let json: unknown;
  try {
    json = answer.text.trim() === '' ? {} : JSON.parse(answer.text);
  } catch {
    throw bad(`a body that is not JSON: ${describeErrorBody(answer.text)}`);
  }
  const named: Record<string, unknown> = typeof json === 'object' && json !== null ? { ...json } : {};
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw bad(`an unexpected body (${describeZodErrorInline(parsed.error, 5)})`, named);
  const pages = named.page_count;
  if (pages !== undefined && pages !== null && !isPageCount(pages)) {
    throw bad(`page_count ${JSON.stringify(pages)}, which is not a number of pages`, named);
  }
  return parsed.data;
}

/** Where a 404 may be a route the service lacks rather than a wrong address (cost/attempt.ts isMissingRoute). */
function maybeMissingRoute(step: Step, status: number, html: boolean): boolean {
  return status === 404 && (step === 'upload-url' || (step === 'get' && html));
}

/** The hosting platform's text for a function stopped at its time limit (cost/attempt.ts functionTimeout). */
const FUNCTION_TIMEOUT = /\bFUNCTION_INVOCATION_TIMEOUT\b/;

/**
 * An inline answer `success: false` (HTTP 200): the extraction failed and the service refunded
 * it; its document_id is kept. Undefined for any other answer, which parseBody reads.
 */
function failedExtraction(answer: Answer, subject: string): ServiceError | undefined {
  if (answer.status < 200 || answer.status >= 300 || !/"success"\s*:\s*false/.test(answer.text)) return undefined;
  const parsed = FailedExtract.safeParse(parseJson(answer.text));
  if (!parsed.success) return undefined;
  const { document_id: documentId, error, message } = parsed.data;
  const why = describeErrorBody(JSON.stringify({ error: error ?? message ?? 'no reason given' }));
  return new ServiceError('rejected', `${subject}: the service's extraction failed (success: false: ${why})`, {
    status: answer.status,
    charge: 'refunded',
    retryable: true,
    documentId: documentId === undefined || documentId === '' ? undefined : documentId,
  });
}

const FailedExtract = z.object({
  success: z.literal(false),
  document_id: z.string().optional(),
  error: z.string().optional(),
  message: z.string().optional(),
});

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return redact(`${u.origin}${u.pathname}`);
  } catch {
    return redact(url);
  }
}
