import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import type { EmulatorConfig, ParserConfig, Results } from '../contract/index.ts';
import { EngineError, type Engine } from '../engine/types.ts';
import type { EmulatorDeps } from './clock.ts';
import type { DocumentRow, Documents } from './documents.ts';
import type { Ledger } from './ledger.ts';
import { transaction, type Store } from './store.ts';

/**
 * Extraction of documents that were accepted and reserved: the engine's real work plus
 * the simulated time per page, then completed, or error with the reservation refunded in
 * the same transaction. Stored-path documents run here in the background; inline ones
 * are awaited by their request. Nothing here knows HTTP.
 */
export type Outcome =
  | { status: 'completed'; pageCount: number; results: Results }
  /** unreadable: the document's fault (corrupt, encrypted...); internal: the emulator's. */
  | { status: 'error'; error: string; cause: 'unreadable' | 'internal' };

export type Processor = {
  /**
   * Runs one document to its end state and returns it; `injectedError` makes it fail (fault
   * injection); `onCompleted` runs inside the transaction that completes it (an Idempotency-Key's answer).
   */
  run(doc: DocumentRow, injectedError?: string, onCompleted?: (results: Results) => void): Promise<Outcome>;
  /** Queues a stored-path document for background extraction. */
  enqueue(doc: DocumentRow, injectedError?: string): void;
  /** Marks a document failed and refunds it (inline time-out, a crash of an inline request). */
  abandon(documentId: string, reason: string): void;
  /** Called once a document reached completed or error (webhooks hang here). */
  onFinished(listener: (doc: DocumentRow) => void): void;
  /** Resolves when the background queue is empty. */
  idle(): Promise<void>;
  /** Stops taking new work and waits for what is running. */
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
}): Processor {
  const { store, documents, ledger, engine, config, parsers, deps, onFinishedInTransaction } = input;
  const limit = pLimit(config.processing.concurrency);
  const listeners: Array<(doc: DocumentRow) => void> = [];
  const running = new Set<Promise<unknown>>();
  let closed = false;

  const finish = (documentId: string, outcome: Outcome, onCompleted?: (results: Results) => void) => {
    const changed = transaction(store.db, () => {
      const done =
        outcome.status === 'completed'
          ? documents.complete(documentId, outcome.pageCount, outcome.results, deps.now())
          : documents.fail(documentId, outcome.error, deps.now());
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

  const extract = async (doc: DocumentRow, injectedError?: string): Promise<Outcome> => {
    const parser = parsers.get(doc.parser_id);
    if (!parser) return { status: 'error', cause: 'internal', error: `the parser ${doc.parser_id} is no longer configured` };
    if (injectedError !== undefined) {
      await deps.sleep((doc.page_count ?? 1) * config.processing.ms_per_page);
      return { status: 'error', cause: 'internal', error: `${injectedError}; the credits were refunded` };
    }
    try {
      const bytes = await readFile(join(store.blobDir, doc.blob));
      const [out] = await Promise.all([
        engine.extract({ bytes, mimeType: doc.mime_type, fields: parser.fields }),
        deps.sleep((doc.page_count ?? 1) * config.processing.ms_per_page),
      ]);
      return { status: 'completed', pageCount: out.pageCount, results: out.results };
    } catch (err) {
      if (err instanceof EngineError) return { status: 'error', cause: 'unreadable', error: err.message };
      return { status: 'error', cause: 'internal', error: `extraction failed inside the emulator (${err instanceof Error ? err.message : String(err)}); the credits were refunded` };
    }
  };

  const processor: Processor = {
    async run(doc, injectedError, onCompleted) {
      const outcome = await extract(doc, injectedError);
      finish(doc.document_id, outcome, onCompleted);
      return outcome;
    },
    enqueue(doc, injectedError) {
      if (closed) return;
      const task = limit(() => (closed ? undefined : processor.run(doc, injectedError)));
      running.add(task);
      void task.finally(() => running.delete(task));
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
    async close() {
      closed = true;
      limit.clearQueue();
      await Promise.allSettled([...running]);
    },
  };
  return processor;
}
