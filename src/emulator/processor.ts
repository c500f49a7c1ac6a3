import { join } from 'node:path';
import pLimit from 'p-limit';
import type { EmulatorConfig, ParserConfig, Results } from '../contract/index.ts';
import { EngineClosedError, EngineError, type Engine, type Grounding } from '../engine/types.ts';
import type { EmulatorDeps } from './clock.ts';
import type { DocumentRow, Documents } from './documents.ts';
import type { Ledger } from './ledger.ts';
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
 * A background document still reading this long after its simulated time yields its place among
 * `processing.concurrency` to the next one (it goes on, and the engine's fair queue puts fresh
 * documents before it): a few slow or hostile documents never hold the background queue.
 */
const OVERTIME_MS = 5000;

/**
 * How long close() waits for documents still being read (an engine it does not own, say) before it
 * returns and leaves them processing, as a kill would (resume() takes them up on the next start).
 */
const CLOSE_WAIT_MS = 5000;

/** Starts of background extraction before a document that never ends is failed (README: Emulator behaviour). */
export const MAX_ATTEMPTS = 3;

export type Processor = {
  /**
   * Runs one document to its end state and returns it; `injectedError` makes it fail (fault
   * injection); `onCompleted` runs inside the transaction that completes it (an Idempotency-Key's answer).
   * An aborted `signal` stops the engine's worker and fails the document with the abort's reason.
   */
  run(
    doc: DocumentRow,
    injectedError?: string,
    onCompleted?: (results: Results) => void,
    signal?: AbortSignal,
  ): Promise<Outcome>;
  /** Queues a stored-path document for background extraction. */
  enqueue(doc: DocumentRow, injectedError?: string): void;
  /** Marks a document failed and refunds it (inline time-out, a crash of an inline request). */
  abandon(documentId: string, reason: string): void;
  /** Called once a document reached completed or error (webhooks hang here). */
  onFinished(listener: (doc: DocumentRow) => void): void;
  /** Resolves when the background queue is empty. */
  idle(): Promise<void>;
  /**
   * Stops taking new work and finishing documents: what the engine was reading when it was closed
   * stays processing (resume() takes it up on the next start).
   */
  stop(): void;
  /** stop(), then waits for what is running. */
  close(): Promise<void>;
};

export function createProcessor(input: {
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
}): Processor {
  const { store, documents, ledger, engine, config, parsers, deps, onFinishedInTransaction } = input;
  const log = input.log ?? (() => {});
  const limit = pLimit(config.processing.concurrency);
  const listeners: Array<(doc: DocumentRow) => void> = [];
  const running = new Set<Promise<unknown>>();
  let closed = false;

  const finish = (documentId: string, outcome: Outcome, onCompleted?: (results: Results) => void): Outcome => {
    try {
      settle(documentId, outcome, onCompleted);
      return outcome;
    } catch (err) {
      // A bug of ours while completing (a result the contract refuses, say): the document fails
      // and is refunded, and the server goes on. Without its hooks, which may be what threw.
      log(
        `internal error while finishing ${documentId}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
      const failed: Outcome = {
        status: 'error',
        cause: 'internal',
        error: 'extraction failed inside the emulator while storing its result; the credits were refunded',
      };
      try {
        transaction(store.db, () => {
          if (documents.fail(documentId, failed.error, deps.now())) ledger.refund(documentId, deps.now());
        });
      } catch (again) {
        log(`internal error while failing ${documentId}: ${again instanceof Error ? again.message : String(again)}`);
      }
      return failed;
    }
  };

  const settle = (documentId: string, outcome: Outcome, onCompleted?: (results: Results) => void) => {
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
      for (const l of listeners) l(doc);
    }
  };

  const extract = async (doc: DocumentRow, injectedError?: string, signal?: AbortSignal): Promise<Outcome> => {
    const parser = parsers.get(doc.parser_id);
    if (!parser)
      return { status: 'error', cause: 'internal', error: `the parser ${doc.parser_id} is no longer configured` };
    const simulated = () => abortable(deps.sleep((doc.page_count ?? 1) * config.processing.ms_per_page), signal);
    try {
      if (injectedError !== undefined) {
        await simulated();
        return { status: 'error', cause: 'internal', error: `${injectedError}; the credits were refunded` };
      }
      const maxBytes = config.processing.max_file_bytes;
      if (doc.size > maxBytes) return overRehearsalLimit(doc.size, maxBytes);
      // The worker reads the stored file itself: the server's thread never holds the bytes.
      const [out] = await Promise.all([
        engine.extract(
          { bytes: { path: join(store.blobDir, doc.blob) }, mimeType: doc.mime_type, fields: parser.fields },
          { signal },
        ),
        simulated(),
      ]);
      // The pages charged are the pages counted at submission; a reading that disagrees is not billed.
      if (out.pageCount !== doc.page_count) {
        return {
          status: 'error',
          cause: 'unreadable',
          error: `the document read as ${out.pageCount} pages during extraction but ${doc.page_count} when it was counted; its page tree is damaged: re-save the file and submit it again (refunded)`,
        };
      }
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
      if (signal?.aborted) {
        const error = reasonOf(signal);
        return { status: 'error', cause: 'internal', error, notes: [`stopped: ${error}`] };
      }
      if (err instanceof EngineError) {
        const notes =
          err.code === 'too_large'
            ? [`stopped by processing.engine_memory_mb (${config.processing.engine_memory_mb} MB): ${err.message}`]
            : undefined;
        return { status: 'error', cause: 'unreadable', error: err.message, ...(notes ? { notes } : {}) };
      }
      return {
        status: 'error',
        cause: 'internal',
        error: `extraction failed inside the emulator (${err instanceof Error ? err.message : String(err)}); the credits were refunded`,
      };
    }
  };

  /**
   * A background run, counted: a document whose extraction was started MAX_ATTEMPTS times without
   * ending (each time the server stopped under it) fails with a refund instead of being re-queued
   * on every restart.
   */
  const background = async (doc: DocumentRow, injectedError?: string) => {
    if (documents.startAttempt(doc.document_id) > MAX_ATTEMPTS) {
      return finish(doc.document_id, {
        status: 'error',
        cause: 'internal',
        error: `extraction was interrupted ${MAX_ATTEMPTS} times (the server stopped each time); the credits were refunded: submit the document again, and report it if it happens again`,
      });
    }
    const limitMs = config.processing.timeout_ms;
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
      return await processor.run(doc, injectedError, undefined, timeout.signal);
    } finally {
      clearTimeout(timer);
    }
  };

  const processor: Processor = {
    async run(doc, injectedError, onCompleted, signal) {
      const outcome = await extract(doc, injectedError, signal);
      // Read after the server stopped waiting for it: left processing for resume(), as a kill would.
      if (closed) throw new EngineClosedError('the emulator stopped while this document was read');
      return finish(doc.document_id, outcome, onCompleted);
    },
    enqueue(doc, injectedError) {
      if (closed) return;
      const slot = limit(async () => {
        if (closed) return;
        const work = background(doc, injectedError);
        // Nothing in the background may take the process down: a failure is logged, never thrown.
        running.add(work);
        void work
          .catch((err: unknown) => {
            if (err instanceof EngineClosedError) return;
            log(
              `internal error in background extraction of ${doc.document_id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
            );
          })
          .finally(() => running.delete(work));
        let timer: NodeJS.Timeout | undefined;
        const overtime = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, (doc.page_count ?? 1) * config.processing.ms_per_page + OVERTIME_MS);
          timer.unref();
        });
        await Promise.race([work.catch(() => {}), overtime]).finally(() => clearTimeout(timer));
      });
      running.add(slot);
      void slot.catch(() => {}).finally(() => running.delete(slot));
    },
    abandon(documentId, reason) {
      finish(documentId, { status: 'error', cause: 'internal', error: reason });
    },
    onFinished(listener) {
      listeners.push(listener);
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    stop() {
      closed = true;
    },
    async close() {
      closed = true;
      // Queued tasks are not cleared (a cleared task's promise never settles, and close would wait
      // for it forever): each sees `closed` and returns at once; they stay processing for resume().
      // What is still being read gets CLOSE_WAIT_MS to end: stopping never waits on a document.
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
        timer.unref();
      });
      await Promise.race([Promise.allSettled([...running]), waited]).finally(() => clearTimeout(timer));
    },
  };
  return processor;
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
