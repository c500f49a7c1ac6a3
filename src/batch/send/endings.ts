import { ServiceError } from '../../client/errors.ts';
import {
  type DocumentRecord,
  type Route,
  completedRecord,
  errorRecord,
  notSubmittedRecord,
  pendingRecord,
} from '../../outputs/record.ts';
import { storedResults } from '../../outputs/stored-results.ts';
import { redact } from '../../redact.ts';
import { inert } from '../../inert.ts';
import type { SentRequest } from '../../journal/journal.ts';
import { LAST_POLL_MIN_MS } from './poll.ts';
import { countedEarlier, type Counted } from '../../cost/rerun.ts';
import { type Job, countPages } from '../plan/index.ts';
import { afterFailure, stopsTheRun, uncertainCause } from '../../cost/attempt.ts';
import {
  chargeOf,
  createdNothing,
  failureOutcome,
  type FailureCharge,
  type UncertainCause,
} from '../../cost/charge.ts';
import { ClaimLostError, JournalWriteError } from '../../journal/state/index.ts';

import type { Charges, Outcome, StopReason } from '../outcome.ts';

import type { PipelineContext } from './context.ts';

/**
 * How a document ends in the send step: completed, pending, failed (refunded, uncertain, a bad
 * answer), each journaled and settled with its record, and the pages this run counted.
 */
export class Endings {
  readonly #c: PipelineContext;
  /** Extract requests of this run that may have reached the service unanswered, by job key. */
  readonly uncertain = new Map<string, SentRequest>();
  /**
   * Pages counted per document this run works on (by its job's ordinal: a number, where a map of
   * keys held each key's string to the end of the run), by this run or, per the journal, an earlier one.
   */
  readonly counted = new Map<number, number>();
  readonly charges: Charges = { reserved: 0, refunded: 0, unknown: 0, recognised: 0, byClient: 0 };

  constructor(context: PipelineContext) {
    this.#c = context;
  }

  /**
   * The service answered with a document an earlier run counted (countedEarlier): a resend under
   * the same Idempotency-Key, answered with the first document. Its pages were charged once and
   * counted once: this run counts them as recognised. Returns them.
   */
  recognise(job: Job, documentId: string): number | undefined {
    const earlier = countedEarlier(job.prior);
    if (earlier === undefined || earlier.document_id !== documentId || this.counted.has(job.ordinal)) return undefined;
    this.counted.set(job.ordinal, earlier.page_count);
    this.charges.recognised += earlier.page_count;
    this.#c.log(
      'info',
      `${job.input.file}: the service answered with ${documentId}, charged for before: not charged again`,
    );
    return earlier.page_count;
  }

  /** The document of this job whose pages are counted (by this run or an earlier one), for the journal's facts. */
  countedFor(job: Job, documentId: string | null): { counted: Counted } | Record<string, never> {
    const pages = documentId === null ? undefined : this.counted.get(job.ordinal);
    if (documentId !== null && pages !== undefined) return { counted: { document_id: documentId, page_count: pages } };
    const earlier = countedEarlier(job.prior);
    return earlier !== undefined ? { counted: earlier } : {};
  }

  /** Counts a document's pages the first time any run learns them. */
  learnPages(job: Job, pageCount: number | null): void {
    if (pageCount === null || this.counted.has(job.ordinal)) return;
    this.counted.set(job.ordinal, pageCount);
    this.charges.reserved += pageCount;
  }

  /** Submitted and charged, not finished: the record says so, and the journal keeps its pages. */
  async pending(job: Job, route: Route, documentId: string, pageCount: number | null, why: string): Promise<void> {
    const c = this.#c;
    const countedBefore = this.counted.has(job.ordinal);
    if (pageCount === null && !countedBefore) {
      // Stopped before the first poll (Ctrl+C, SIGTERM): one read of the document, outside the
      // run's abort, tells what was charged, so the summary and the record can say it.
      try {
        pageCount = (await c.client.getDocument(documentId, AbortSignal.timeout(LAST_POLL_MIN_MS))).page_count;
      } catch {
        // unknown: counted by the run that learns it
      }
    }
    this.learnPages(job, pageCount);
    if (!this.counted.has(job.ordinal)) this.charges.unknown++;
    else if (!countedBefore) {
      // This run counted the pages: the run that collects the document must not count them again.
      await c.journal.append({
        fact: 'submitted',
        ...this.common(job),
        route,
        document_id: documentId,
        page_count: pageCount,
      });
    }
    c.settle(job, {
      kind: 'pending',
      record: pendingRecord(
        { file: job.input.file, document_id: documentId, route },
        why,
        this.counted.get(job.ordinal) ?? pageCount,
      ),
    });
  }

  async completed(
    job: Job,
    route: Route,
    documentId: string,
    pageCount: number | null,
    results: DocumentRecord['results'],
    countedHere = false,
  ): Promise<void> {
    const c = this.#c;
    if (countedHere && pageCount !== null && !this.counted.has(job.ordinal))
      this.charges.byClient = (this.charges.byClient ?? 0) + pageCount;
    this.learnPages(job, pageCount);
    if (pageCount === null && !this.counted.has(job.ordinal)) this.charges.unknown++;
    const res = results ?? {};
    await c.journal.append({
      fact: 'completed',
      ...this.common(job),
      route,
      document_id: documentId,
      page_count: pageCount,
      ...(countedHere ? { pages_counted_by: 'client' as const } : {}),
      results: res,
    });
    c.settle(job, {
      kind: 'completed',
      ...(countedHere ? { pagesCountedBy: 'client' as const } : {}),
      // As their JSON text (one string), not the parsed tree: the record spool (records.ts) writes
      // that text to disk as it is, and the writers copy or parse it when they read it back.
      record: completedRecord(
        { file: job.input.file, document_id: documentId, route },
        pageCount,
        storedResults(JSON.stringify(res)),
      ),
    });
  }

  async failed(job: Job, route: Route, err: unknown, documentId: string | null = null): Promise<void> {
    const c = this.#c;
    if (err instanceof ClaimLostError) {
      // Another worker sharing the journal holds the document now; it was not sent from here.
      c.settle(job, notSubmitted(job, route, err.message));
      return;
    }
    if (err instanceof JournalWriteError) {
      // Its `sending` fact could not be written, so the request was not sent: nothing was charged.
      c.stop('journal', err.message);
      c.settle(job, notSubmitted(job, route, reasonText('journal')));
      return;
    }
    if (err instanceof ServiceError && err.charge === 'refunded') {
      await this.refunded(job, route, err);
      return;
    }
    const named = err instanceof ServiceError && err.kind === 'bad_response' ? (err.documentId ?? documentId) : null;
    if (err instanceof ServiceError && named !== null) {
      await this.badAnswer(job, route, named, err);
      return;
    }
    const uncertain = documentId === null ? this.uncertain.get(job.key) : undefined;
    this.uncertain.delete(job.key);
    if (err instanceof ServiceError && uncertain === undefined) {
      // The run stops (or has stopped): what was not sent is "not submitted"; a submitted document is pending.
      const stop: StopReason | undefined = stopsTheRun(err.kind);
      if (stop !== undefined) c.stop(stop, err.message);
      const after = afterFailure(err.kind, documentId);
      if (after === 'not-submitted') {
        c.settle(job, notSubmitted(job, route, reasonText(stop ?? c.stopped() ?? 'interrupted')));
        return;
      }
      if (after !== 'failed' && documentId !== null) {
        // Submitted (and charged) already: the document is still the service's; a rerun collects it.
        const how =
          after === 'pending-at-stop'
            ? 'still processing when the run stopped: rerun the same command to collect it (it will not be charged again)'
            : `${err.message}: rerun the same command to collect it`;
        await this.pending(job, route, documentId, null, how);
        return;
      }
    }
    // An extract request left uncertain is kept, so --retry-failed resends it unchanged.
    const how = failureOutcome({
      ended: 'error',
      retryable: err instanceof ServiceError ? err.retryable : undefined,
      requestInDoubt: uncertain !== undefined,
      documentId,
    });
    const reason =
      how.charge === 'uncertain' && documentId === null && c.client.offers.noDocuments
        ? await this.fateUnknown(job, err)
        : redact(err instanceof Error ? err.message : String(err));
    if (!createdNothing(how.charge) && !this.counted.has(job.ordinal)) this.charges.unknown++;
    const cause =
      how.charge === 'uncertain' ? uncertainCause(err instanceof ServiceError ? err.kind : undefined) : undefined;
    await this.settleFailure(job, route, documentId, reason, { ...how, request: uncertain, cause });
  }

  /**
   * An extract request whose answer was lost, on a service with no route to read a document:
   * nothing can tell whether it was charged, so the message says that, and what --retry-failed
   * may cost (the pages as counted here).
   */
  async fateUnknown(job: Job, err: unknown): Promise<string> {
    const what =
      err instanceof ServiceError && err.kind === 'server'
        ? `a proxy answered for the service (HTTP ${err.status})`
        : 'the answer was lost after the request was sent';
    const pages = job.pages ?? (await countPages(job.input.path, job.mimeType).catch(() => null));
    const cost =
      pages === null ? 'its pages once more' : `${pages} page${pages === 1 ? '' : 's'} once more, as counted here`;
    return redact(
      `${inert(job.input.file)}: ${what}, and its fate cannot be known: this service has no route to ask about a document and may ignore Idempotency-Key; it was not sent again. --retry-failed sends it again, which may charge ${cost}`,
    );
  }

  /**
   * The service answered at once that its extraction failed (an inline `success: false`) and
   * refunded it: the document_id is kept, nothing is counted, and a plain rerun sends it once
   * more (cost/charge.ts failureOutcome); failed again, it is set aside for --retry-failed.
   */
  async refunded(job: Job, route: Route, err: ServiceError): Promise<void> {
    this.uncertain.delete(job.key);
    const again = job.prior?.fact === 'failed' && chargeOf(job.prior) === 'refunded';
    const next = again
      ? 'it failed so before too: set aside, --retry-failed sends it again'
      : 'a plain rerun sends it once more';
    const reason = redact(`${err.message}; refunded by the service: ${next}`);
    await this.settleFailure(job, route, err.documentId ?? null, reason, {
      ...failureOutcome({ ended: 'refunded', answered: { again } }),
    });
  }

  /**
   * An answer the client could not take (too deep, page_count not a number of pages) that still
   * named its document: the service made it, so it may be charged. The journal keeps its
   * document_id (a rerun does not send it again) and the record says how to fetch it.
   */
  async badAnswer(job: Job, route: Route, documentId: string, err: ServiceError): Promise<void> {
    this.uncertain.delete(job.key);
    const pageCount = err.pageCount ?? null;
    this.learnPages(job, pageCount);
    if (!this.counted.has(job.ordinal)) this.charges.unknown++;
    const reason = redact(
      `${err.message}: document ${documentId} may have been charged; "extract get ${documentId}" fetches it once the service answers it properly`,
    );
    await this.settleFailure(job, route, documentId, reason, {
      ...failureOutcome({ ended: 'answer-refused' }),
      pageCount: this.counted.get(job.ordinal) ?? pageCount,
      cause: 'answer_refused',
    });
  }

  /** Journals a failure (what it cost; the request to resend when uncertain) and settles its record. */
  async settleFailure(
    job: Job,
    route: Route,
    documentId: string | null,
    reason: string,
    how: {
      retryable: boolean;
      charge: FailureCharge;
      request?: SentRequest | undefined;
      pageCount?: number | null;
      cause?: UncertainCause | undefined;
    },
  ): Promise<void> {
    // A large file that failed before its upload ended has no hash to key a fact by; nothing was
    // charged, and a rerun sends it again, as it would after a fact saying so.
    if (job.unhashed !== true)
      await this.#c.journal.append({
        fact: 'failed',
        ...this.common(job),
        route,
        document_id: documentId,
        reason,
        retryable: how.retryable,
        charge: how.charge,
        ...(how.request ? { request: how.request } : {}),
        ...(how.cause !== undefined ? { cause: how.cause } : {}),
        // What a run counted stays known, so that a resend answered with it is not counted again.
        ...this.countedFor(job, documentId),
      });
    this.#c.settle(job, {
      kind: 'failed',
      failure: { retryable: how.retryable, charge: how.charge },
      record: errorRecord({ file: job.input.file, document_id: documentId, route }, reason, how.pageCount),
    });
  }

  common(job: Job): { at: string; sha256: string; target: string; file: string } {
    return {
      at: new Date(this.#c.deps.now()).toISOString(),
      sha256: job.sha256,
      target: job.target ?? this.#c.target,
      file: job.input.file,
    };
  }
}

export function notSubmitted(job: Job, route: Route, why: string): Outcome {
  return {
    kind: 'not_submitted',
    record: notSubmittedRecord({ file: job.input.file, route }, `not submitted: ${why}`),
  };
}

/** What the summary says to do next after the run stopped for this reason. */
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
    case 'unreachable':
      return 'the service stopped answering; rerun the same command once it is back (nothing unsent was charged)';
    case 'wrong_service':
      return 'the base URL is not the service; fix it, then rerun the same command (nothing unsent was charged)';
    case 'journal':
      return 'the journal could not be written; free space on its disk, then rerun the same command';
  }
}
