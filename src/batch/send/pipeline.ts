import { pollDelay } from '../../client/backoff.ts';
import { ServiceError } from '../../client/errors.ts';
import type { Route } from '../../outputs/record.ts';
import { readWhole, sha256Of } from '../facts.ts';
import type { FileStamp } from '../discover.ts';
import { inert } from '../../inert.ts';
import type { SentRequest } from '../../journal/journal.ts';
import { fetchable } from '../../cost/rerun.ts';
import type { Job } from '../plan/index.ts';
import { countPagesOfBytes } from '../plan/index.ts';
import type { Charges } from '../outcome.ts';
import { extractCharged, newRequest } from './charged.ts';
import { collect, pollUntilDone } from './collect.ts';
import { lockedPdf, refusedHere } from './locked.ts';
import type { PipelineContext } from './context.ts';
import { Endings, notSubmitted, reasonText } from './endings.ts';
import { asRead } from './identify.ts';
import { InRun } from './in-run.ts';
import { pageCountOf, routeOf, type Sending } from './sending.ts';
import { sendUpload, type Sent } from './upload.ts';

/**
 * One document through the send step: by its route (inline, or upload and poll), the one step
 * that costs credits bracketed by the journal (charged.ts), a file hashed on its way keyed by
 * what it holds before it is charged (identify.ts), an earlier run's document collected
 * (collect.ts).
 */
export class Pipeline {
  readonly #c: PipelineContext;
  /** Pages of documents sent in this run, for --max-credits (counted before sending). */
  #committedPages = 0;
  /** Whether the parser the service answered with was said (once a run). */
  #parserSaid = false;
  /** How each document ends: its facts, its record, its pages counted. */
  readonly #end: Endings;
  /** What the steps of sending (identify.ts, upload.ts, collect.ts) share with this one. */
  readonly #s: Sending;

  constructor(context: PipelineContext) {
    const read = new Map<number, FileStamp>();
    const inRun = new InRun();
    // Every outcome also ends the wait of a copy of the same content (identify.ts), and carries
    // the stat of what was read to send it (what --move-done may move).
    this.#c = {
      ...context,
      settle: (job, outcome) => {
        const stamp = read.get(job.ordinal);
        read.delete(job.ordinal);
        context.settle(job, stamp === undefined ? outcome : { ...outcome, read: stamp });
        inRun.ended(job.key, outcome);
      },
    };
    this.#end = new Endings(this.#c);
    this.#s = { c: this.#c, end: this.#end, read, inRun };
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
      const locked = refusedHere(job) ?? (await lockedPdf(job, c.passwordsGiven === true));
      if (locked !== undefined) throw locked;

      if (route === 'inline') {
        // The bytes sent are the bytes hashed: read once, through one descriptor, and keyed by what they are.
        const { bytes, read } = readWhole(job.input.path, job.input.within);
        this.#s.read.set(job.ordinal, read);
        const keyed = await asRead(this.#s, job, sha256Of(bytes), route);
        job = keyed.job;
        if (keyed.known !== undefined) {
          await keyed.known();
          return;
        }
        try {
          await this.#sendInline(job, bytes, keyed.resend);
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
        sent = await sendUpload(this.#s, job, route, resend, keyed);
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
      await pollUntilDone(this.#s, job, documentId, route, pollDelay(0, c.poll), 1, sent.pageCount);
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
      await collect(this.#s, job);
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
    const request = resend ?? newRequest(this.#s, job, undefined);
    const body = { file: { data: bytes.toString('base64'), name: request.file_name, type: request.file_type } };
    const answer = await extractCharged(this.#s, job, 'inline', request, () =>
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
}

/** Why a file bound inline went to the upload route: its size (a 413), or the inline time limit. */
type Moved = 'size' | 'time';
