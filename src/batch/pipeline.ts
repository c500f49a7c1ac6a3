import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ServiceClient } from '../client/service-client.ts';
import { pollDelay, type PollPolicy } from '../client/backoff.ts';
import type { ClientDeps, Log } from '../client/deps.ts';
import { ServiceError } from '../client/errors.ts';
import type { DocumentRecord, Route } from '../outputs/record.ts';
import { redact } from '../redact.ts';
import type { JournalWriter, SentRequest } from './journal.ts';
import type { Limiter } from './limiter.ts';
import type { Job } from './plan.ts';
import { ClaimLostError } from './state/index.ts';

/** Why a run stopped submitting before every file was sent. */
export type StopReason = 'out_of_credits' | 'auth' | 'interrupted' | 'max_credits';

/**
 * How one document ended in this run:
 * - completed / failed: the service said so (or the file could not be sent)
 * - pending: submitted, still processing at the deadline or when the run stopped; a rerun resumes it
 * - not_submitted: never sent, because the run stopped (402, auth, signal, --max-credits); a rerun sends it
 */
export type OutcomeKind = 'completed' | 'failed' | 'pending' | 'not_submitted';
export type Outcome = { kind: OutcomeKind; record: DocumentRecord; retryable?: boolean };

export type PipelineContext = {
  client: ServiceClient;
  journal: JournalWriter;
  target: string;
  poll: PollPolicy;
  maxCredits: number | undefined;
  deps: ClientDeps;
  sendSlots: Limiter;
  pendingSlots: Limiter;
  /** Aborted on SIGINT/SIGTERM and on auth failure: stops the idempotent steps (PUT, GET). */
  signal: AbortSignal;
  log: Log;
  stopped: () => StopReason | undefined;
  stop: (reason: StopReason, message: string) => void;
  settle: (job: Job, outcome: Outcome) => void;
};

/** How often an expired upload address is replaced before the file is reported as failed. */
const TICKET_ATTEMPTS = 3;

/**
 * The Idempotency-Key of an extract request: derived from the content (sha256), the target
 * (fingerprint of base URL and key) and the request's shape, so the same request always
 * carries the same key. Inline: the name and type are part of the body, so they are part of
 * the key (a renamed file is another request, not a clash). Storage path: each upload has
 * its own path, so a later upload of the same file is a new request with a new key.
 */
export function idempotencyKey(sha256: string, target: string, request: { file_name: string; file_type: string; storage_path?: string | undefined }): string {
  const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
  const shape = request.storage_path === undefined ? `inline-${digest(`${request.file_name}\n${request.file_type}`)}` : `upload-${digest(request.storage_path)}`;
  return `extract-${sha256.slice(0, 32)}-${target}-${shape}`;
}

/** Statuses a proxy in front of the service answers after the request may have reached it. */
const GATEWAY_STATUSES = new Set([502, 504]);

export class Pipeline {
  readonly #c: PipelineContext;
  /** Pages of documents sent in this run, for --max-credits (counted before sending). */
  #committedPages = 0;
  /** Extract requests of this run that may have reached the service unanswered, by job key. */
  readonly #uncertain = new Map<string, SentRequest>();

  constructor(context: PipelineContext) {
    this.#c = context;
  }

  /** Sends a file by its route, then polls it when it went by upload. */
  async submit(job: Job): Promise<void> {
    const c = this.#c;
    let route: Route = routeOf(job);
    let releasePending: (() => void) | undefined;
    let releaseSend: (() => void) | undefined;
    try {
      if (route !== 'inline') releasePending = await c.pendingSlots.acquire();
      releaseSend = await c.sendSlots.acquire();
      if (this.#notSending(job, route)) return;

      if (route === 'inline') {
        try {
          await this.#sendInline(job, job.resend);
          return;
        } catch (err) {
          if (!(err instanceof ServiceError && err.kind === 'inline_unavailable')) throw err;
          c.log('info', `${job.input.file}: ${err.message}; moving it to upload-and-poll`);
          route = 'inline->upload';
          // Take a polling slot without holding the send slot meanwhile (no deadlock when all senders wait).
          releaseSend();
          releaseSend = undefined;
          releasePending = await c.pendingSlots.acquire();
          releaseSend = await c.sendSlots.acquire();
          if (this.#notSending(job, route)) return;
        }
      }
      const documentId = await this.#sendUpload(job, route, job.resend?.storage_path !== undefined ? job.resend : undefined);
      releaseSend();
      releaseSend = undefined;
      await this.#pollUntilDone(job, documentId, route, pollDelay(0, c.poll), 1);
    } catch (err) {
      await this.#failed(job, route, err);
    } finally {
      releaseSend?.();
      releasePending?.();
    }
  }

  /** A document an earlier run submitted: poll it, never send it again. */
  async resume(job: Job): Promise<void> {
    const prior = job.prior;
    if (prior?.fact !== 'submitted') return;
    const release = await this.#c.pendingSlots.acquire();
    try {
      // The first GET at once: the document has had the whole gap between runs to finish.
      await this.#pollUntilDone(job, prior.document_id, prior.route, 0, 0);
    } catch (err) {
      await this.#failed(job, prior.route, err, prior.document_id);
    } finally {
      release();
    }
  }

  /** True (and the outcome settled) when this file must not be sent now. */
  #notSending(job: Job, route: Route): boolean {
    const c = this.#c;
    const reason = c.stopped();
    if (reason !== undefined) {
      c.settle(job, notSubmitted(job, route, reasonText(reason)));
      return true;
    }
    if (c.maxCredits !== undefined) {
      const pages = job.pages ?? 1;
      if (this.#committedPages + pages > c.maxCredits) {
        c.stop('max_credits', `--max-credits ${c.maxCredits}: stopped submitting before the run's pages would exceed it`);
        c.settle(job, notSubmitted(job, route, reasonText('max_credits')));
        return true;
      }
      this.#committedPages += pages;
    }
    return false;
  }

  async #sendInline(job: Job, resend: SentRequest | undefined): Promise<void> {
    const c = this.#c;
    const bytes = await readFile(job.input.path);
    const request = resend ?? this.#request(job, undefined);
    const body = { file: { data: bytes.toString('base64'), name: request.file_name, type: request.file_type } };
    const answer = await this.#extract(job, 'inline', request, () => c.client.extractInline(body, request.idempotency_key));
    if (answer.success === false) {
      throw new ServiceError('rejected', `${job.input.file}: the service answered success: false`);
    }
    let pageCount: number | null = typeof answer['page_count'] === 'number' ? answer['page_count'] : null;
    if (pageCount === null) {
      // The inline response has no page_count (spec 3a); the document has it.
      try {
        pageCount = (await c.client.getDocument(answer.document_id, c.signal)).page_count;
      } catch (err) {
        c.log('warn', `${job.input.file}: page count unavailable (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    await this.#completed(job, 'inline', answer.document_id, pageCount, answer.results);
  }

  /**
   * upload-url, PUT, extract. Returns the document_id, journaled before anything else happens.
   * `resend`: an earlier, uncertain submission of an uploaded storage path, submitted again
   * unchanged first (no new upload); if the service no longer knows the path, upload again.
   */
  async #sendUpload(job: Job, route: Route, resend: SentRequest | undefined): Promise<string> {
    const c = this.#c;
    for (let attempt = 1; ; attempt++) {
      let request: SentRequest;
      const issuedAt = c.deps.now();
      if (attempt === 1 && resend?.storage_path !== undefined) {
        request = resend;
      } else {
        const ticket = await c.client.uploadUrl({ file_name: job.name, file_type: job.mimeType }, c.signal);
        try {
          await c.client.putBytes(ticket, { path: job.input.path, size: job.input.size, type: job.mimeType }, c.signal);
        } catch (err) {
          if (err instanceof ServiceError && err.kind === 'ticket_expired' && attempt < TICKET_ATTEMPTS) {
            c.log('info', `${job.input.file}: the upload address expired (valid ${ticket.expires_in} s); asking for a new one`);
            continue;
          }
          throw err;
        }
        request = this.#request(job, ticket.storage_path);
      }
      if (c.stopped() === 'interrupted' || c.stopped() === 'auth') {
        // Uploaded but not submitted: nothing is charged, a rerun starts over.
        throw new ServiceError('aborted', 'stopped before submitting');
      }
      const storagePath = request.storage_path ?? '';
      try {
        const accepted = await this.#extract(job, route, request, () =>
          c.client.extractStored({ storage_path: storagePath, file_name: request.file_name, file_type: request.file_type, file_size: job.input.size }, request.idempotency_key),
        );
        await c.journal.append({ fact: 'submitted', ...this.#common(job), route, document_id: accepted.document_id });
        c.log('debug', `${job.input.file}: submitted as ${accepted.document_id}`);
        return accepted.document_id;
      } catch (err) {
        // A storage path refused as expired or missing was refused before any charge: upload again.
        if (err instanceof ServiceError && (err.kind === 'rejected' || err.kind === 'not_found') && /expire|not found|no such|missing/i.test(err.message) && attempt < TICKET_ATTEMPTS) {
          c.log('info', `${job.input.file}: the service refused the storage path (${err.message}); uploading again (${Math.round((c.deps.now() - issuedAt) / 1000)} s after the ticket)`);
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * Polls on the guidance's schedule: `firstDelay`, then pollDelay(nextStep), pollDelay(nextStep + 1)...
   * A fresh submission waits 2 s, 3 s, 4.5 s...; a resumed one polls at once, then 2 s, 3 s...
   */
  async #pollUntilDone(job: Job, documentId: string, route: Route, firstDelay: number, nextStep: number): Promise<void> {
    const c = this.#c;
    const deadline = c.deps.now() + c.poll.timeoutMs;
    let delay = firstDelay;
    for (let step = nextStep; ; step++) {
      const left = deadline - c.deps.now();
      if (left <= 0 || c.stopped() === 'interrupted' || c.stopped() === 'auth') {
        const why = left <= 0 ? `still processing after ${Math.round(c.poll.timeoutMs / 1000)} s` : 'still processing when the run stopped';
        c.settle(job, pending(job, route, documentId, `${why}: rerun the same command to collect it (it will not be charged again)`));
        return;
      }
      await c.deps.sleep(Math.min(delay, left), c.signal);
      if (c.signal.aborted) continue;
      const doc = await c.client.getDocument(documentId, c.signal);
      if (doc.status === 'completed') {
        await this.#completed(job, route, documentId, doc.page_count, doc.results ?? {});
        return;
      }
      if (doc.status === 'error') {
        const reason = redact(doc.error ?? 'the service reported an error without an explanation');
        await c.journal.append({ fact: 'failed', ...this.#common(job), route, document_id: documentId, reason, retryable: true });
        c.settle(job, { kind: 'failed', retryable: true, record: { file: job.input.file, document_id: documentId, status: 'error', page_count: doc.page_count, results: null, error: reason, route } });
        return;
      }
      delay = pollDelay(step, c.poll);
    }
  }

  async #completed(job: Job, route: Route, documentId: string, pageCount: number | null, results: DocumentRecord['results']): Promise<void> {
    const c = this.#c;
    const res = results ?? {};
    await c.journal.append({ fact: 'completed', ...this.#common(job), route, document_id: documentId, page_count: pageCount, results: res });
    c.settle(job, { kind: 'completed', record: { file: job.input.file, document_id: documentId, status: 'completed', page_count: pageCount, results: res, error: null, route } });
  }

  async #failed(job: Job, route: Route, err: unknown, documentId: string | null = null): Promise<void> {
    const c = this.#c;
    if (err instanceof ClaimLostError) {
      // Another worker sharing the journal holds the document now; it was not sent from here.
      c.settle(job, notSubmitted(job, route, err.message));
      return;
    }
    if (err instanceof ServiceError) {
      if (err.kind === 'auth') {
        c.stop('auth', err.message);
        c.settle(job, documentId ? pending(job, route, documentId, reasonText('auth')) : notSubmitted(job, route, reasonText('auth')));
        return;
      }
      if (err.kind === 'out_of_credits') {
        c.stop('out_of_credits', err.message);
        c.settle(job, notSubmitted(job, route, reasonText('out_of_credits')));
        return;
      }
      if (err.kind === 'aborted') {
        c.settle(job, documentId ? pending(job, route, documentId, reasonText('interrupted')) : notSubmitted(job, route, reasonText('interrupted')));
        return;
      }
      if (documentId !== null && err.kind !== 'not_found') {
        // Polling failed (network, 5xx after retries): the document is still the service's; resume later.
        c.settle(job, pending(job, route, documentId, `${err.message}: rerun the same command to collect it`));
        return;
      }
    }
    const reason = redact(err instanceof Error ? err.message : String(err));
    const retryable = err instanceof ServiceError ? err.retryable : true;
    // An extract request left uncertain is kept, so --retry-failed resends it unchanged.
    const request = documentId === null ? this.#uncertain.get(job.key) : undefined;
    this.#uncertain.delete(job.key);
    await c.journal.append({ fact: 'failed', ...this.#common(job), route, document_id: documentId, reason, retryable, ...(request ? { request } : {}) });
    c.settle(job, { kind: 'failed', retryable, record: { file: job.input.file, document_id: documentId, status: 'error', page_count: null, results: null, error: reason, route } });
  }

  /**
   * The one step that costs credits. The journal brackets it: `sending` (with the request
   * and its Idempotency-Key) before, and `unsent` when the service answered without
   * creating a document, so that only a crash while the request is in flight leaves the
   * uncertain `sending` as the last fact. No answer at all, or a proxy's 502/504, leaves
   * the outcome unknown: the request is remembered for the `failed` fact.
   */
  async #extract<T>(job: Job, route: Route, request: SentRequest, send: () => Promise<T>): Promise<T> {
    const c = this.#c;
    await c.journal.append({ fact: 'sending', ...this.#common(job), route, request });
    try {
      const answer = await send();
      this.#uncertain.delete(job.key);
      return answer;
    } catch (err) {
      const status = err instanceof ServiceError ? err.status : undefined;
      if (status !== undefined && status >= 300 && !GATEWAY_STATUSES.has(status)) {
        this.#uncertain.delete(job.key);
        await c.journal.append({ fact: 'unsent', ...this.#common(job), route });
      } else {
        this.#uncertain.set(job.key, request);
      }
      throw err;
    }
  }

  /** A new extract request of this job: the name and type it is sent with, and its key. */
  #request(job: Job, storagePath: string | undefined): SentRequest {
    const sent = { file_name: job.name, file_type: job.mimeType, ...(storagePath !== undefined ? { storage_path: storagePath } : {}) };
    return { ...sent, idempotency_key: idempotencyKey(job.sha256, this.#c.target, sent) };
  }

  #common(job: Job): { at: string; sha256: string; target: string; file: string } {
    return { at: new Date(this.#c.deps.now()).toISOString(), sha256: job.sha256, target: this.#c.target, file: job.input.file };
  }
}

/** The route of a job; a resend goes by the shape of the request it repeats. */
function routeOf(job: Job): Route {
  if (!job.resend) return job.decision.route;
  if (job.resend.storage_path === undefined) return 'inline';
  return job.prior?.route === 'inline->upload' ? 'inline->upload' : 'upload';
}

function notSubmitted(job: Job, route: Route, why: string): Outcome {
  return { kind: 'not_submitted', record: { file: job.input.file, document_id: null, status: 'error', page_count: null, results: null, error: `not submitted: ${why}`, route } };
}

function pending(job: Job, route: Route, documentId: string, why: string): Outcome {
  return { kind: 'pending', record: { file: job.input.file, document_id: documentId, status: 'error', page_count: null, results: null, error: why, route } };
}

export function reasonText(reason: StopReason): string {
  switch (reason) {
    case 'out_of_credits':
      return 'the service is out of credits (402); top up, then rerun the same command';
    case 'auth':
      return 'the API key was rejected; fix it, then rerun the same command';
    case 'interrupted':
      return 'the run was interrupted; rerun the same command to continue';
    case 'max_credits':
      return 'the run reached --max-credits; rerun with a higher limit to continue';
  }
}
