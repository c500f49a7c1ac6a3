import { join } from 'node:path';
import pLimit from 'p-limit';
import type { EmulatorConfig, ParserConfig, Results } from '../contract/index.ts';
import { EngineClosedError, EngineError, type Engine, type Grounding, NEEDS_MORE_MEMORY } from '../engine/types.ts';
import type { EmulatorDeps } from './clock.ts';
import type { DocumentRow, Documents } from './documents.ts';
import type { Ledger } from './ledger.ts';
import { overPageCap } from './pages.ts';
import { transaction } from '../sqlite.ts';
import type { Store } from './store.ts';

/**
 * Extraction of documents that were accepted and reserved: the engine's real work plus
 * the simulated time per page, then completed, or error with the reservation refunded in
 * the same transaction. Stored-path documents run here in the background; inline ones
 * are awaited by their request. Nothing here knows HTTP.
 */
type Outcome =
  /** grounding: where each value was found, kept for the emulator's own surface only. */
  | { status: 'completed'; pageCount: number; results: Results; grounding?: Grounding; notes?: string[] }
  /**
   * unreadable: the document's fault (corrupt, encrypted, over the engine's memory limit...); internal: the
   * emulator's. notes: which limit stopped it, for the emulator's own surface.
   */
  | { status: 'error'; error: string; cause: 'unreadable' | 'internal'; notes?: string[] };

/**
 * How long close() waits for documents still being read (an engine it does not own, say) before it
 * returns and leaves them processing, as a kill would (resume() takes them up on the next start).
 */
const CLOSE_WAIT_MS = 5000;

/** Starts of background extraction before a document that never ends is failed (README: Emulator behaviour). */
export const MAX_ATTEMPTS = 3;

export type ProcessorParts = {
  store: Store;
  documents: Documents;
  ledger: Ledger;
  engine: Engine;
  config: EmulatorConfig;
  parsers: ReadonlyMap<string, ParserConfig>;
  deps: EmulatorDeps;
  /** Runs inside the transaction that finishes a document (the webhook outbox stores its events there). */
  onFinishedInTransaction?: (doc: DocumentRow) => void;
  /** Failures of the emulator itself, for its stderr. */
  log?: (line: string) => void;
};

export class Processor {
  readonly #p: ProcessorParts;
  readonly #log: (line: string) => void;
  readonly #limit: ReturnType<typeof pLimit>;
  readonly #listeners: Array<(doc: DocumentRow) => void> = [];
  readonly #running = new Set<Promise<unknown>>();
  #closed = false;
  /** Aborted by stop(): a document's simulated time ends there (nothing that was read can finish after it). */
  readonly #stopping = new AbortController();

  constructor(parts: ProcessorParts) {
    this.#p = parts;
    this.#log = parts.log ?? (() => {});
    this.#limit = pLimit(parts.config.processing.concurrency);
  }

  /**
   * Runs one document to its end state and returns it; `injectedError` makes it fail (fault
   * injection); `onCompleted` runs inside the transaction that completes it (an Idempotency-Key's answer).
   * An aborted `signal` stops the engine's worker and fails the document with the abort's reason,
   * or, with `leaveOnAbort`, leaves it processing and reserved (a platform that stopped the request
   * refunds later: cleanup.ts).
   */
  async run(
    doc: DocumentRow,
    options: {
      injectedError?: string | undefined;
      onCompleted?: ((results: Results) => void) | undefined;
      signal?: AbortSignal | undefined;
      leaveOnAbort?: boolean;
    } = {},
  ): Promise<Outcome> {
    const { injectedError, onCompleted, signal } = options;
    const outcome = await this.#extract(doc, injectedError, signal);
    // Read after the server stopped waiting for it: left processing for resume(), as a kill would.
    if (this.#closed) throw new EngineClosedError('the emulator stopped while this document was read');
    if (options.leaveOnAbort && signal?.aborted) return outcome;
    return this.#finish(doc.document_id, outcome, onCompleted);
  }

  /** Queues a stored-path document for background extraction. */
  enqueue(doc: DocumentRow, injectedError?: string): void {
    if (this.#closed) return;
    const slot = this.#limit(async () => {
      if (this.#closed) return;
      const work = this.#background(doc, injectedError);
      // Nothing in the background may take the process down: a failure is logged, never thrown.
      this.#track(work, (err) => {
        if (err instanceof EngineClosedError) return;
        this.#log(`internal error in background extraction of ${doc.document_id}: ${errorText(err)}`);
      });
      // A turn is processing.slow_ms of wall time: after it, the document yields its place to the next
      // one (it goes on, and the engine's fair queue puts fresh documents before it), whatever its
      // simulated time. Simulated time is the service's pace, not a reason to hold a place: a turn
      // as long as it would let a few long documents hold every place while one-page ones wait.
      await withTimeout(
        work.catch(() => {}),
        this.#p.config.processing.slow_ms,
      );
    });
    this.#track(slot, () => {});
  }

  /** Marks a document failed and refunds it (inline time-out, a crash of an inline request). */
  abandon(documentId: string, reason: string): void {
    this.#finish(documentId, { status: 'error', cause: 'internal', error: reason });
  }

  /** Called once a document reached completed or error (webhooks hang here). */
  onFinished(listener: (doc: DocumentRow) => void): void {
    this.#listeners.push(listener);
  }

  /** Resolves when the background queue is empty. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /**
   * Stops taking new work and finishing documents: what the engine was reading when it was closed
   * stays processing (resume() takes it up on the next start).
   */
  stop(): void {
    this.#closed = true;
    this.#stopping.abort(new EngineClosedError('the emulator stopped while this document was processed'));
  }

  /** stop(), then waits for what is running. */
  async close(): Promise<void> {
    this.stop();
    // Queued tasks are not cleared (a cleared task's promise never settles, and close would wait
    // for it forever): each sees `closed` and returns at once; they stay processing for resume().
    // What is still being read gets CLOSE_WAIT_MS to end: stopping never waits on a document.
    await withTimeout(Promise.allSettled([...this.#running]), CLOSE_WAIT_MS);
  }

  /** Keeps `work` among the running until it settles; `onError` sees its failure. */
  #track(work: Promise<unknown>, onError: (err: unknown) => void): void {
    this.#running.add(work);
    void work.catch(onError).finally(() => this.#running.delete(work));
  }

  /** Settles the document; a bug of ours while settling fails it with a refund instead. */
  #finish(documentId: string, outcome: Outcome, onCompleted?: (results: Results) => void): Outcome {
    try {
      this.#settle(documentId, outcome, onCompleted);
      return outcome;
    } catch (err) {
      // A bug of ours while completing (a result the contract refuses, say): the document fails
      // and is refunded, and the server goes on. Without its hooks, which may be what threw.
      this.#log(`internal error while finishing ${documentId}: ${errorText(err)}`);
      const failed: Outcome = {
        status: 'error',
        cause: 'internal',
        error: 'extraction failed inside the emulator while storing its result; the credits were refunded',
      };
      const { store, documents, ledger, deps } = this.#p;
      try {
        transaction(store.db, () => {
          if (documents.fail(documentId, failed.error, deps.now())) ledger.refund(documentId, deps.now());
        });
      } catch (again) {
        this.#log(
          `internal error while failing ${documentId}: ${again instanceof Error ? again.message : String(again)}`,
        );
      }
      return failed;
    }
  }

  /** One transaction: completed, or failed and refunded, with the hooks that must land with it. */
  #settle(documentId: string, outcome: Outcome, onCompleted?: (results: Results) => void): void {
    const { store, documents, ledger, deps, onFinishedInTransaction } = this.#p;
    const changed = transaction(store.db, () => {
      const done =
        outcome.status === 'completed'
          ? documents.complete(
              documentId,
              outcome.pageCount,
              outcome.results,
              deps.now(),
              outcome.grounding,
              outcome.notes,
            )
          : documents.fail(documentId, outcome.error, deps.now(), outcome.notes);
      if (done && outcome.status === 'error') ledger.refund(documentId, deps.now());
      if (done) onFinishedInTransaction?.(documents.get(documentId)!);
      if (done && outcome.status === 'completed') onCompleted?.(outcome.results);
      return done;
    });
    if (changed) {
      const doc = documents.get(documentId)!;
      for (const l of this.#listeners) l(doc);
    }
  }

  /** The engine's reading plus the simulated time, as an outcome; only the server's stopping is thrown. */
  async #extract(doc: DocumentRow, injectedError?: string, signal?: AbortSignal): Promise<Outcome> {
    const { config, deps, engine, store } = this.#p;
    const parser = this.#p.parsers.get(doc.parser_id);
    if (!parser)
      return { status: 'error', cause: 'internal', error: `the parser ${doc.parser_id} is no longer configured` };
    const stopping = signal ? AbortSignal.any([signal, this.#stopping.signal]) : this.#stopping.signal;
    const simulated = () => abortable(deps.sleep((doc.page_count ?? 1) * config.processing.ms_per_page), stopping);
    try {
      if (injectedError !== undefined) {
        await simulated();
        return { status: 'error', cause: 'internal', error: `${injectedError}; the credits were refunded` };
      }
      const maxBytes = config.processing.max_file_bytes;
      if (doc.size > maxBytes) return overRehearsalLimit(doc.size, maxBytes);
      // Counted under a higher cap (accepted before a restart with a lower one): refunded, not read.
      const overCap = overPageCap(doc.page_count ?? 0, config.processing.max_pages, 'the credits were refunded');
      if (overCap !== null)
        return { status: 'error', cause: 'unreadable', error: overCap, notes: [`stopped by processing.max_pages`] };
      // The worker reads the stored file itself: the server's thread never holds the bytes.
      const [out] = await Promise.all([
        engine.extract(
          { bytes: { path: join(store.blobDir, doc.blob) }, mimeType: doc.mime_type, fields: parser.fields },
          { signal },
        ),
        simulated(),
      ]);
      // The pages charged are the pages counted at submission; a reading that disagrees is not billed.
      if (out.pageCount !== doc.page_count) return pagesDisagree(out.pageCount, doc.page_count);
      return {
        status: 'completed',
        pageCount: out.pageCount,
        results: out.results,
        grounding: out.grounding,
        ...(out.notes ? { notes: out.notes } : {}),
      };
    } catch (err) {
      // The server is stopping: the document was not read, and is neither failed nor refunded.
      if (err instanceof EngineClosedError) throw err;
      return failedReading(err, signal, config.processing.engine_memory_mb);
    }
  }

  /**
   * A background run, counted: a document whose extraction was started MAX_ATTEMPTS times without
   * ending (each time the server stopped under it) fails with a refund instead of being re-queued
   * on every restart. Bounded by processing.timeout_ms.
   */
  async #background(doc: DocumentRow, injectedError?: string): Promise<Outcome> {
    if (this.#p.documents.startAttempt(doc.document_id) > MAX_ATTEMPTS) {
      return this.#finish(doc.document_id, {
        status: 'error',
        cause: 'internal',
        error: `extraction was interrupted ${MAX_ATTEMPTS} times (the server stopped each time); the credits were refunded: submit the document again, and report it if it happens again`,
      });
    }
    const limitMs = this.#p.config.processing.timeout_ms;
    const timeout = new AbortController();
    const timer = setTimeout(
      () =>
        timeout.abort(
          new Error(
            `extraction took longer than ${limitMs} ms (processing.timeout_ms) and was stopped; the credits were refunded`,
          ),
        ),
      limitMs,
    );
    try {
      return await this.run(doc, { injectedError, signal: timeout.signal });
    } finally {
      clearTimeout(timer);
    }
  }
}

const errorText = (err: unknown): string => (err instanceof Error ? (err.stack ?? err.message) : String(err));

/** Waits for `promise`, or `ms` at most (the timer does not keep the process alive). */
async function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([promise, waited]).finally(() => clearTimeout(timer));
}

/** What a failed reading is: stopped by its caller's deadline, the document's fault (the engine said why), or ours. */
function failedReading(err: unknown, signal: AbortSignal | undefined, engineMemoryMb: number): Outcome {
  if (signal?.aborted) {
    const error = reasonOf(signal);
    return { status: 'error', cause: 'internal', error, notes: [`stopped: ${error}`] };
  }
  if (err instanceof EngineError) {
    const notes =
      err.code === 'too_large' && err.message.includes(NEEDS_MORE_MEMORY)
        ? [`stopped by processing.engine_memory_mb (${engineMemoryMb} MB): ${err.message}`]
        : undefined;
    return { status: 'error', cause: 'unreadable', error: err.message, ...(notes ? { notes } : {}) };
  }
  return {
    status: 'error',
    cause: 'internal',
    error: `extraction failed inside the emulator (${err instanceof Error ? err.message : String(err)}); the credits were refunded`,
  };
}

/** A document that reads as another number of pages than were counted (and charged) is not billed. */
function pagesDisagree(read: number, counted: number | null): Outcome {
  return {
    status: 'error',
    cause: 'unreadable',
    error: `the document read as ${read} pages during extraction but ${counted} when it was counted; its page tree is damaged: re-save the file and submit it again (refunded)`,
  };
}

/**
 * A file over `processing.max_file_bytes` was counted and charged like any other, and fails as a
 * failed extraction does on the real service (which has no ceiling): error, refunded.
 */
function overRehearsalLimit(size: number, maxBytes: number): Outcome {
  return {
    status: 'error',
    cause: 'unreadable',
    error: `the file is ${size} bytes, over the emulator's rehearsal limit of ${maxBytes} bytes (processing.max_file_bytes; the real service has no ceiling): raise processing.max_file_bytes in serve's config to rehearse this file; the credits were refunded`,
  };
}

/** `promise`, or the signal's reason as soon as it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** The text an abort leaves on the document (the caller names the limit in its reason). */
const reasonOf = (signal: AbortSignal): string =>
  signal.reason instanceof Error ? signal.reason.message : 'extraction was cancelled; the credits were refunded';
