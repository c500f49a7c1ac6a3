import type { Readable } from 'node:stream';
import {
  API_PREFIX,
  UploadTicket,
  type ExtractInlineRequest,
  type ExtractStoredRequest,
  type UploadUrlRequest,
} from '../contract/index.ts';
import { rememberSecret } from '../redact.ts';
import { backoffDelay, DEFAULT_RETRY, parseRetryAfter, type RetryPolicy } from './backoff.ts';
import type { ClientDeps, LogLevel } from './deps.ts';
import { errnoCode } from '../errno.ts';
import { type AttemptFacts, decide, type Step, circuitSignal } from '../cost/attempt.ts';
import type { Circuit } from './circuit.ts';
import { FileChangedError, hashedFileBody, type UploadSource } from './upload-body.ts';
import { requestUrl } from '../net/request.ts';
import { describeErrorBody, neverReachedService, serviceErrorMessage, ServiceError } from './errors.ts';
import { ServiceOffers } from './offers.ts';
import {
  AcceptedExtract,
  type AcceptedResult,
  type Answer,
  FetchedDocument,
  failedExtraction,
  InlineExtract,
  type InlineResult,
  MAX_ANSWER_BYTES,
  parseBody,
  readCapped,
} from './answers.ts';
import { type CalledService, describeUrl, failureError, noRouteError, unreachableError } from './failures.ts';
import { FirstContact } from './first-contact.ts';

export type { FetchedDocument } from './answers.ts';

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
  /** The service as failures name it. */
  readonly #service: CalledService;
  readonly #limits: { requestMs: number; extractMs: number; answerBytes: number };
  /** The base URL as logs show it (describeUrl), worked out once rather than per request. */
  readonly #shownBase: string;
  readonly #contact = new FirstContact();

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
    this.#service = { baseUrl: this.baseUrl, shownBase: this.#shownBase, circuit: options.circuit };
  }

  /** Operation 1: a signed, short-lived upload address. */
  async uploadUrl(body: UploadUrlRequest, signal?: AbortSignal): Promise<UploadTicket> {
    if (this.offers.noUpload) throw noRouteError({ step: 'upload-url', subject: body.file_name }, this.#shownBase);
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
    if (this.offers.noDocuments) throw noRouteError({ step: 'get', subject: documentId }, this.#shownBase);
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
  #call(call: Call): Promise<Answer> {
    return call.step === 'put' ? this.#retrying(call) : this.#contact.through(() => this.#retrying(call));
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
    if (this.#circuit?.isOpen) throw unreachableError(this.baseUrl, this.#circuit);
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
      throw failureError(call, label, decision, { attempt, code, cause: err }, this.#service);
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
      apiAnswered: this.#contact.verified || (maybeMissingRoute(call.step, status, html) && (await this.#apiAnswers())),
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
    const location = headers.location === undefined ? undefined : String(headers.location);
    const got = { attempt, status, detail: describeErrorBody(text), html: facts.html, location };
    throw failureError(call, label, decision, got, this.#service);
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
}

/** Per attempt, for the small requests (upload-url, GET document): a slow drip is cut here and retried. */
export const REQUEST_TIMEOUT_MS = 60_000;
/** Per attempt of POST extract: longer, since an inline extraction answers when it is done. */
const EXTRACT_TIMEOUT_MS = 300_000;

/** Where a 404 may be a route the service lacks rather than a wrong address (cost/attempt.ts isMissingRoute). */
function maybeMissingRoute(step: Step, status: number, html: boolean): boolean {
  return status === 404 && (step === 'upload-url' || (step === 'get' && html));
}

/** The hosting platform's text for a function stopped at its time limit (cost/attempt.ts functionTimeout). */
const FUNCTION_TIMEOUT = /\bFUNCTION_INVOCATION_TIMEOUT\b/;
