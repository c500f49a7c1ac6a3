import type { FileHandle } from 'node:fs/promises';
import { pollDelay } from '../../client/backoff.ts';
import { ServiceError } from '../../client/errors.ts';
import { type Route, UNEXPLAINED_ERROR } from '../../outputs/record.ts';
import { redact } from '../../redact.ts';
import { hashOf, openInput, readWhole, sha256Of } from '../facts.ts';
import { stampOf, type FileStamp } from '../discover.ts';
import { inert, SERVICE_TEXT_MAX } from '../../inert.ts';
import { lookup, soleIdentity } from '../../journal/identity.ts';
import type { SentRequest } from '../../journal/journal.ts';
import { pollDocument } from './poll.ts';
import { fetchable, rerunAction, resendOf } from '../../cost/rerun.ts';
import { priorRecord, serviceName, type Job } from '../plan/jobs.ts';
import { uploadAgain } from '../../cost/attempt.ts';
import { createdNothing, failureOutcome } from '../../cost/charge.ts';
import { countPagesOfBytes } from '../plan/pages.ts';
import { lockedPdf } from './locked.ts';

import type { Charges, Outcome } from '../outcome.ts';
import type { PipelineContext } from './context.ts';
import { Endings, notSubmitted, reasonText } from './endings.ts';
import { idempotencyKey } from './idempotency.ts';

/**
 * What became of a file hashed while it was uploaded, once its content was looked up: sent
 * (a document_id), or already known (completed, submitted, left by an earlier run, or being
 * sent by this run under another name), in which case nothing was charged.
 */
type Sent = { job: Job; documentId: string; pageCount: number | null } | { job: Job; known: () => Promise<void> };

/** A job as its bytes were read to be sent: keyed by them (`known`: nothing to send, see #identify). */
type AsRead = { job: Job; resend?: SentRequest | undefined; known?: () => Promise<void> };

/** How often an expired upload address is replaced before the file is reported as failed. */
const TICKET_ATTEMPTS = 3;

export class Pipeline {
  readonly #c: PipelineContext;
  /** Pages of documents sent in this run, for --max-credits (counted before sending). */
  #committedPages = 0;
  /** Whether the parser the service answered with was said (once a run). */
  #parserSaid = false;
  /** How each document ends: its facts, its record, its pages counted. */
  readonly #end: Endings;
  /** Outcomes of content hashed while uploaded, by its real key, for a copy of it in the same run. */
  readonly #inRun = new Map<string, Promise<Outcome>>();
  readonly #resolveInRun = new Map<string, (outcome: Outcome) => void>();
  /** The stat of each file being sent as its bytes were read, by ordinal, until its outcome carries it. */
  readonly #read = new Map<number, FileStamp>();

  constructor(context: PipelineContext) {
    // Every outcome also ends the wait of a copy of the same content (#identify), and carries
    // the stat of what was read to send it (what --move-done may move).
    this.#c = {
      ...context,
      settle: (job, outcome) => {
        const read = this.#read.get(job.ordinal);
        this.#read.delete(job.ordinal);
        context.settle(job, read === undefined ? outcome : { ...outcome, read });
        this.#resolveInRun.get(job.key)?.(outcome);
      },
    };
    this.#end = new Endings(this.#c);
  }

  /** What this run caused the service to charge (README: Outputs, pages charged). */
  charges(): Charges {
    return { ...this.#end.charges };
  }

  /** Sends a file by its route, then polls it when it went by upload. */
  async submit(planned: Job): Promise<void> {
    const c = this.#c;
    // A file hashed while it is uploaded gets its real key (and sha256) after the PUT.
    let job = planned;
    let route: Route = routeOf(job);
    // Larger than a body this service refused (a 413 taught it): not sent inline again.
    let movedFor: Moved | undefined;
    if (route === 'inline' && job.resend === undefined && !c.client.offers.fitsInline(job.input.size)) {
      route = 'inline->upload';
      movedFor = 'size';
    }
    let documentId: string | null = null;
    let releasePending: (() => void) | undefined;
    let releaseSend: (() => void) | undefined;
    try {
      if (route !== 'inline') releasePending = await c.pendingSlots.acquire();
      releaseSend = await c.sendSlots.acquire();
      if (this.#notSending(job, route)) return;
      await c.beforeSend?.(job.input.file);
      const locked = await lockedPdf(job, c.passwordsGiven === true);
      if (locked !== undefined) throw locked;

      if (route === 'inline') {
        // The bytes sent are the bytes hashed: read once, through one descriptor, and keyed by what they are.
        const { bytes, read } = readWhole(job.input.path, job.input.within);
        this.#read.set(job.ordinal, read);
        const asRead = await this.#asRead(job, sha256Of(bytes), route);
        job = asRead.job;
        if (asRead.known !== undefined) {
          await asRead.known();
          return;
        }
        try {
          await this.#sendInline(job, bytes, asRead.resend);
          return;
        } catch (err) {
          if (!(err instanceof ServiceError && err.kind === 'inline_unavailable')) throw err;
          movedFor = err.status === 413 ? 'size' : 'time';
          if (!c.client.offers.noUpload)
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
      // A failure after the PUT keyed the job by its bytes is that content's (its facts, its uncertain request).
      const keyed = (next: Job) => {
        job = next;
      };
      const resend = job.resend?.storage_path !== undefined ? job.resend : undefined;
      if (c.client.offers.noUpload && resend === undefined) {
        await this.#noUploadRoute(job, route, movedFor);
        return;
      }
      let sent: Sent;
      try {
        sent = await this.#sendUpload(job, route, resend, keyed);
      } catch (err) {
        if (!(err instanceof ServiceError && err.kind === 'no_route')) throw err;
        await this.#noUploadRoute(job, route, movedFor);
        return;
      }
      job = sent.job;
      releaseSend();
      releaseSend = undefined;
      if ('known' in sent) {
        await sent.known();
        return;
      }
      documentId = sent.documentId;
      await this.#pollUntilDone(job, documentId, route, pollDelay(0, c.poll), 1, sent.pageCount);
    } catch (err) {
      // Once a document_id is known the document is the service's (and paid for): a failure
      // from here on leaves it pending, never "not submitted".
      await this.#end.failed(job, route, err, documentId);
    } finally {
      releaseSend?.();
      releasePending?.();
    }
  }

  /** A document an earlier run got a document_id for (cost/rerun.ts fetchable): poll it, never send it again. */
  async resume(job: Job): Promise<void> {
    if (fetchable(job.prior) === undefined) return;
    const release = await this.#c.pendingSlots.acquire();
    try {
      await this.#collect(job);
    } finally {
      release();
    }
  }

  /** Polls the document an earlier run got a document_id for (job.prior), holding a polling slot. */
  async #collect(job: Job): Promise<void> {
    const prior = fetchable(job.prior);
    if (prior === undefined) return;
    // An earlier run that knew its pages counted them.
    if (prior.page_count !== undefined && prior.page_count !== null)
      this.#end.counted.set(job.ordinal, prior.page_count);
    try {
      // The first GET at once: the document has had the whole gap between runs to finish.
      await this.#pollUntilDone(job, prior.document_id, prior.route, 0, 0, null);
    } catch (err) {
      await this.#end.failed(job, prior.route, err, prior.document_id);
    }
  }

  /**
   * The job as its bytes were read to be sent (`sha256`: of those bytes). A file hashed while it
   * is uploaded learns its key here; a file whose bytes are not the ones its plan hashed (it was
   * rewritten or replaced in between) is keyed by what is sent, never by the planned content,
   * which stays as it was in the journal: a later file with that content is sent, not given
   * this one's results.
   */
  async #asRead(job: Job, sha256: string, route: Route): Promise<AsRead> {
    if (job.unhashed !== true && sha256 === job.sha256) return { job, resend: job.resend };
    if (job.unhashed !== true)
      this.#c.log(
        'warn',
        `${inert(job.input.file)}: changed after it was read (its content is not the one planned): sent as it is now, under the hash of the bytes sent`,
      );
    return this.#identify(job, sha256, route);
  }

  /**
   * A file hashed as it was sent: its content looked up in the journal (the replay, and
   * what this run wrote) before anything is charged. New content is sent; content the journal
   * knows is handled as a rerun handles it (a renamed copy of a completed document is recorded,
   * never sent again); content this run is sending under another name takes that outcome.
   */
  async #identify(planned: Job, sha256: string, route: Route): Promise<AsRead> {
    const c = this.#c;
    const { unhashed: _, resend: _planned, ...rest } = planned;
    const found = lookup(c.known ?? new Map(), sha256, c.identity ?? soleIdentity(c.target));
    const job: Job = { ...rest, sha256, key: found.key, target: found.target };
    const sibling = this.#inRun.get(job.key);
    if (sibling !== undefined) {
      return {
        job,
        known: async () => {
          const outcome = await sibling;
          c.settle(job, { ...outcome, record: { ...outcome.record, file: job.input.file } });
        },
      };
    }
    this.#openInRun(job.key);
    // A shared journal: the content is claimed here before it is spent on (another worker may hold it).
    const claim = c.adopt === undefined ? undefined : await c.adopt(planned, job.key);
    if (c.adopt !== undefined && claim === undefined) {
      const why = 'another worker is sending the content this file now holds: rerun the same command to collect it';
      return { job, known: async () => c.settle(job, notSubmitted(job, route, why)) };
    }
    const prior = claim === undefined ? found.prior : claim.known;
    const action = rerunAction(prior, {
      retryFailed: c.retryFailed === true,
      fresh: c.fresh,
      concurrent: claim?.concurrent === true,
    });
    const known: Job = { ...job, prior, action };
    if (action === 'submit') {
      const resend = resendOf(prior, action, c.fresh === true);
      // An uncertain request of this content is resent only by its own route's shape.
      const fits = resend !== undefined && (resend.storage_path === undefined) === (route === 'inline');
      return { job: known, resend: fits ? resend : undefined };
    }
    c.log('info', `${job.input.file}: its content is known to the journal (${action}); not sent again`);
    return {
      job: known,
      known: async () => {
        if (action === 'resume') return this.#collect(known);
        const record = priorRecord(known);
        if (record !== undefined) c.settle(known, { kind: action === 'done' ? 'completed' : 'failed', record });
      },
    };
  }

  /** Content this run is sending: a second file with it waits for its outcome (see #identify). */
  #openInRun(key: string): void {
    if (this.#inRun.has(key)) return;
    let resolve: (o: Outcome) => void = () => {};
    this.#inRun.set(key, new Promise<Outcome>((r) => (resolve = r)));
    this.#resolveInRun.set(key, resolve);
  }

  /**
   * A file planned with one content that turned out to hold another: whatever waits for the
   * planned content's outcome in this run (a large copy hashed on its upload) is told it was not
   * sent, so it is never given the results of what this file holds now.
   */
  #abandonInRun(planned: Job, now: Job): void {
    const resolve = this.#resolveInRun.get(planned.key);
    this.#inRun.delete(planned.key);
    this.#resolveInRun.delete(planned.key);
    resolve?.(
      notSubmitted(now, routeOf(planned), 'the file sent with this content changed first: rerun the same command'),
    );
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
        c.stop(
          'max_credits',
          `--max-credits ${c.maxCredits}: stopped submitting before the run's pages would exceed it`,
        );
        c.settle(job, notSubmitted(job, route, reasonText('max_credits')));
        return true;
      }
      this.#committedPages += pages;
    }
    return false;
  }

  /** `bytes`: the file as read (and hashed) for this send, in one synchronous read (small: at most --inline-max). */
  async #sendInline(job: Job, bytes: Buffer, resend: SentRequest | undefined): Promise<void> {
    const c = this.#c;
    const request = resend ?? this.#request(job, undefined);
    const body = { file: { data: bytes.toString('base64'), name: request.file_name, type: request.file_type } };
    const answer = await this.#extract(job, 'inline', request, () =>
      c.client.extractInline(body, request.idempotency_key),
    );
    this.#end.recognise(job, answer.document_id);
    if (!this.#parserSaid && typeof answer.parser_id === 'string') {
      this.#parserSaid = true;
      c.log('info', `the service extracts with parser ${inert(answer.parser_id, 100)}, this API key's`);
    }
    let pageCount = pageCountOf(answer);
    if (pageCount === null && !c.client.offers.noDocuments) {
      // The inline response has no page_count (spec 3a); the document has it.
      try {
        pageCount = (await c.client.getDocument(answer.document_id)).page_count;
      } catch (err) {
        if (!(err instanceof ServiceError && err.kind === 'no_route'))
          c.log(
            'warn',
            `${job.input.file}: page count unavailable (${err instanceof Error ? err.message : String(err)})`,
          );
      }
    }
    // A service with no page count to give, in the answer or by a route: the pages it charged by
    // are counted here, by the counter --dry-run and --max-credits use, and said to be.
    const byClient = pageCount === null && c.client.offers.noDocuments;
    // Counted from the bytes sent, not the file again: it may be gone now, and the answer is paid for.
    if (byClient) pageCount = job.pages ?? (await countPagesOfBytes(bytes, job.mimeType));
    await this.#end.completed(
      job,
      'inline',
      answer.document_id,
      pageCount,
      answer.results,
      byClient && pageCount !== null,
    );
  }

  /**
   * A file that only the upload route could take, on a service that has none: failed, uncharged,
   * and set aside (a plain rerun would fail it the same way; --retry-failed tries again).
   */
  async #noUploadRoute(job: Job, route: Route, movedFor: Moved | undefined): Promise<void> {
    const max = this.#c.client.offers.inlineFileMax;
    const why =
      movedFor === 'time'
        ? `too slow for this service's inline time limit (it stopped the extraction and refunds it)`
        : `too large for this service's inline route (${movedFor === 'size' ? (max !== undefined ? `it takes files up to about ${max} bytes inline` : 'it refused the request as too large: HTTP 413') : job.decision.why})`;
    const reason = `${inert(job.input.file)}: ${why}, and it has no upload route: nothing was charged; --retry-failed tries it again`;
    await this.#end.settleFailure(job, route, null, reason, { retryable: false, charge: 'none' });
  }

  /**
   * upload-url, PUT, extract. Returns the document_id, journaled before anything else happens.
   * `resend`: an earlier, uncertain submission of an uploaded storage path, submitted again
   * unchanged first (no new upload); if the service no longer knows the path, upload again.
   */
  async #sendUpload(
    planned: Job,
    route: Route,
    resend: SentRequest | undefined,
    keyed: (job: Job) => void,
  ): Promise<Sent> {
    // A resend of an uncertain storage path sends no bytes: the file is opened only for an upload.
    let file: { handle: FileHandle; size: number } | undefined;
    try {
      return await this.#upload(planned, route, resend, keyed, async () => {
        if (file === undefined) {
          const handle = await openInput(planned.input.path, planned.input.within);
          file = { handle, size: 0 };
          const info = await handle.stat();
          file.size = info.size;
          this.#read.set(planned.ordinal, stampOf(info));
        }
        return file;
      });
    } finally {
      await file?.handle.close();
    }
  }

  /**
   * upload-url, PUT and extract, each upload of the same descriptor (`opened`): its size as it
   * was opened, hashed on the way, and keyed by that hash before POST extract (#asRead).
   */
  async #upload(
    planned: Job,
    route: Route,
    resend: SentRequest | undefined,
    keyed: (job: Job) => void,
    opened: () => Promise<{ handle: FileHandle; size: number }>,
  ): Promise<Sent> {
    const c = this.#c;
    let job = planned;
    let size = job.input.size;
    if (job.unhashed !== true) this.#openInRun(job.key);
    for (let attempt = 1; ; attempt++) {
      let request: SentRequest;
      const issuedAt = c.deps.now();
      if (attempt === 1 && resend?.storage_path !== undefined) {
        request = resend;
      } else {
        const ticket = await c.client.uploadUrl({ file_name: serviceName(job), file_type: job.mimeType }, c.signal);
        let sha256: string | undefined;
        const file = await opened();
        size = file.size;
        try {
          const source = { path: file.handle, name: job.input.file, size, type: job.mimeType };
          ({ sha256 } = await c.client.putBytes(ticket, source, c.signal));
        } catch (err) {
          if (err instanceof ServiceError && err.kind === 'ticket_expired' && attempt < TICKET_ATTEMPTS) {
            c.log(
              'info',
              `${job.input.file}: the upload address expired (valid ${ticket.expires_in} s); asking for a new one`,
            );
            continue;
          }
          throw err;
        }
        // Hashed on the way (one read pass); read again only if the storage answered before taking every byte.
        sha256 ??= await hashOf(file.handle, size);
        let again: SentRequest | undefined;
        if (job.unhashed === true || sha256 !== job.sha256) {
          const before = job;
          const asRead = await this.#asRead(job, sha256, route);
          job = asRead.job;
          keyed(job);
          if (before.unhashed !== true) this.#abandonInRun(before, job);
          if (asRead.known !== undefined) return { job, known: asRead.known };
          // --retry-failed of an uncertain upload: the same request again (same Idempotency-Key), this upload unused.
          again = asRead.resend;
        }
        request = again ?? this.#request(job, ticket.storage_path);
      }
      if (c.signal.aborted) {
        // Uploaded but not submitted: nothing is charged, a rerun starts over.
        throw new ServiceError('aborted', 'stopped before submitting');
      }
      const storagePath = request.storage_path ?? '';
      try {
        const accepted = await this.#extract(job, route, request, () =>
          c.client.extractStored(
            {
              storage_path: storagePath,
              file_name: request.file_name,
              file_type: request.file_type,
              file_size: size,
            },
            request.idempotency_key,
          ),
        );
        // A document an earlier run counted keeps its count, so that a run collecting it does not count it again.
        const recognised = this.#end.recognise(job, accepted.document_id);
        await c.journal.append({
          fact: 'submitted',
          ...this.#end.common(job),
          route,
          document_id: accepted.document_id,
          ...(recognised !== undefined ? { page_count: recognised } : {}),
        });
        c.log('debug', `${job.input.file}: submitted as ${accepted.document_id}`);
        return { job, documentId: accepted.document_id, pageCount: pageCountOf(accepted) };
      } catch (err) {
        // A storage path the service does not know (404) or no longer has (410) was refused
        // before any charge: upload again.
        if (err instanceof ServiceError && uploadAgain(err.status) && attempt < TICKET_ATTEMPTS) {
          c.log(
            'info',
            `${job.input.file}: the service refused the storage path (${err.message}); uploading again (${Math.round((c.deps.now() - issuedAt) / 1000)} s after the ticket)`,
          );
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * Polls on the guidance's schedule (pollDocument): `firstDelay`, then pollDelay(nextStep), pollDelay(nextStep + 1)...
   * A fresh submission waits 2 s, 3 s, 4.5 s...; a resumed one polls at once, then 2 s, 3 s...
   */
  async #pollUntilDone(
    job: Job,
    documentId: string,
    route: Route,
    firstDelay: number,
    nextStep: number,
    knownPages: number | null,
  ): Promise<void> {
    const c = this.#c;
    let pageCount = knownPages;
    const end = await pollDocument(
      c.client,
      documentId,
      { policy: c.poll, firstDelay, nextStep, signal: c.signal, deps: c.deps },
      (doc) => {
        pageCount = doc.page_count ?? pageCount;
      },
    );
    if (end.end !== 'finished') {
      const timeout = `still processing after ${Math.round(c.poll.timeoutMs / 1000)} s`;
      const why =
        end.end === 'unanswered'
          ? `${timeout} (the last poll got no answer in time)`
          : end.end === 'timeout'
            ? timeout
            : 'still processing when the run stopped';
      await this.#end.pending(
        job,
        route,
        documentId,
        pageCount,
        `${why}: rerun the same command to collect it (it will not be charged again)`,
      );
      return;
    }
    const doc = end.doc;
    if (doc.status === 'completed') {
      await this.#end.completed(job, route, documentId, pageCount, doc.results ?? {});
      return;
    }
    const reason = redact(inert(doc.error ?? UNEXPLAINED_ERROR, SERVICE_TEXT_MAX));
    // Reserved, then refunded by the service (spec: "credits refunded").
    this.#end.learnPages(job, pageCount);
    this.#end.charges.refunded += this.#end.counted.get(job.ordinal) ?? 0;
    // The service judged this document: a plain rerun does not send it again (--retry-failed does).
    await this.#end.settleFailure(job, route, documentId, reason, {
      ...failureOutcome({ ended: 'refunded' }),
      pageCount,
    });
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
    await c.journal.append({
      fact: 'sending',
      ...this.#end.common(job),
      route,
      request,
      ...this.#end.countedFor(job, null),
    });
    try {
      const answer = await send();
      this.#end.uncertain.delete(job.key);
      return answer;
    } catch (err) {
      // The client's typed answer: nothing was created (refused, never sent), or it may have been.
      if (err instanceof ServiceError && createdNothing(err.charge)) {
        this.#end.uncertain.delete(job.key);
        await c.journal.append({ fact: 'unsent', ...this.#end.common(job), route });
      } else if (err instanceof ServiceError && err.charge === 'refunded') {
        // The service made a document, failed it and refunded it: known, not in doubt.
        this.#end.uncertain.delete(job.key);
      } else {
        this.#end.uncertain.set(job.key, request);
      }
      throw err;
    }
  }

  /** A new extract request of this job: the name and type it is sent with, and its key. */
  #request(job: Job, storagePath: string | undefined): SentRequest {
    const sent = {
      file_name: serviceName(job),
      file_type: job.mimeType,
      ...(storagePath !== undefined ? { storage_path: storagePath } : {}),
    };
    return { ...sent, idempotency_key: idempotencyKey(job.sha256, job.target ?? this.#c.target, sent) };
  }
}

/** The route of a job; a resend goes by the shape of the request it repeats. */
function routeOf(job: Job): Route {
  if (!job.resend) return job.decision.route;
  if (job.resend.storage_path === undefined) return 'inline';
  return job.prior?.route === 'inline->upload' ? 'inline->upload' : 'upload';
}

/** Why a file bound inline went to the upload route: its size (a 413), or the inline time limit. */
type Moved = 'size' | 'time';

/** A page_count beside the spec's fields (not promised; the emulator does not send one on submission). */
function pageCountOf(answer: Record<string, unknown>): number | null {
  const n = answer.page_count;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null;
}
