import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WorkerReply, WorkerRequest } from './protocol.ts';
import { MAX_ENGINE_FILE_BYTES } from '../contract/constants.ts';
import { hasErrno } from '../errno.ts';
import { BUNDLED, PACKAGE_ROOT } from '../package-root.ts';
import {
  type Engine,
  type EngineCallOptions,
  EngineError,
  type EngineJob,
  type EngineOutput,
  type EngineSource,
} from './types.ts';

/**
 * The extraction engine as the emulator uses it: a small pool of worker threads, so that
 * reading a 300-page PDF never blocks the API's event loop. Each worker reads one document
 * at a time; more requests wait in order. Idle workers do not keep the process alive.
 */

export { extractInProcess, countPagesInProcess } from './extract.ts';
export { EngineError, MAX_ENGINE_FILE_BYTES } from './types.ts';
export type { Engine, EngineErrorCode, EngineInput, EngineJob, EngineOutput, EngineSource, FileRef } from './types.ts';

/**
 * workers: threads at most. heapMb: each worker's V8 heap limit (resourceLimits); a document
 * that needs more is refused as too_large instead of taking the server's memory.
 */
export type EngineOptions = { workers?: number; heapMb?: number; maxFileBytes?: number };

/** Each worker's old-generation heap limit: room for a 300-page PDF, not for a decompression bomb. */
export const ENGINE_HEAP_MB = 512;

type Job = {
  request: WorkerRequest;
  resolve: (reply: WorkerReply & { ok: true }) => void;
  reject: (error: Error) => void;
  signal: AbortSignal | undefined;
};
type Slot = { worker: Worker; job: Job | null };

/** The bundle's worker entry (dist/engine/worker.js) after a build; the .ts source under vitest (Node strips its types). */
function workerUrl(): URL {
  return BUNDLED
    ? pathToFileURL(join(PACKAGE_ROOT, 'dist', 'engine', 'worker.js'))
    : new URL('./worker.ts', import.meta.url);
}

export function createEngine(options: EngineOptions = {}): Engine {
  const size = Math.max(1, options.workers ?? Math.min(2, availableParallelism()));
  const heapMb = options.heapMb ?? ENGINE_HEAP_MB;
  const maxFileBytes = Math.min(options.maxFileBytes ?? MAX_ENGINE_FILE_BYTES, MAX_ENGINE_FILE_BYTES);
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): Slot {
    const worker = new Worker(workerUrl(), { resourceLimits: { maxOldGenerationSizeMb: heapMb } });
    const slot: Slot = { worker, job: null };
    worker.unref();
    worker.on('message', (reply: WorkerReply) => {
      const job = slot.job;
      if (!job || job.request.id !== reply.id) return;
      finish(slot);
      if (reply.ok) job.resolve(reply);
      else if (reply.error.kind === 'engine') job.reject(new EngineError(reply.error.code, reply.error.message));
      else job.reject(internalError(reply.error.message, reply.error.stack));
    });
    const lost = (why: string, outOfMemory = false) => {
      const job = slot.job;
      slot.job = null;
      const i = slots.indexOf(slot);
      if (i >= 0) slots.splice(i, 1);
      if (job && outOfMemory) {
        job.reject(
          new EngineError(
            'too_large',
            `reading the document needs more memory than the engine allows (${heapMb} MB per worker): split or re-save the file and submit it again`,
          ),
        );
      } else if (job) {
        job.reject(internalError(`the engine worker stopped while reading a document (${why})`, undefined));
      }
      if (!closed) dispatch();
    };
    worker.on('error', (e: Error) => lost(e.message, hasErrno(e, 'ERR_WORKER_OUT_OF_MEMORY')));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    slots.push(slot);
    return slot;
  }

  function finish(slot: Slot): void {
    slot.job = null;
    slot.worker.unref();
    dispatch();
  }

  function dispatch(): void {
    while (queue.length > 0) {
      const idle = slots.find((s) => s.job === null) ?? (slots.length < size ? spawn() : undefined);
      const job = idle ? queue.shift() : undefined;
      if (!idle || !job) return;
      idle.job = job;
      idle.worker.ref();
      idle.worker.postMessage(job.request);
    }
  }

  /** A cancelled job leaves the queue, or its worker is stopped (a new one is spawned for the next job). */
  function cancel(job: Job): void {
    const queued = queue.indexOf(job);
    if (queued >= 0) queue.splice(queued, 1);
    const slot = slots.find((s) => s.job === job);
    if (slot) {
      slot.job = null;
      slots.splice(slots.indexOf(slot), 1);
      void slot.worker.terminate();
    }
    job.reject(job.signal?.reason instanceof Error ? job.signal.reason : new Error('the engine call was cancelled'));
    dispatch();
  }

  async function run(
    request: WorkerRequest,
    source: EngineSource,
    options: EngineCallOptions = {},
  ): Promise<WorkerReply & { ok: true }> {
    if (closed) throw new Error('the engine is closed');
    await refuseTooLarge(source, maxFileBytes);
    const signal = options.signal;
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = () => cancel(job);
      const job: Job = {
        request,
        resolve: (reply) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(reply);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
        signal,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(job);
      dispatch();
    });
  }

  return {
    async countPages(bytes: EngineSource, mimeType: string, options?: EngineCallOptions): Promise<number> {
      const reply = await run({ id: nextId++, op: 'count', bytes, mimeType }, bytes, options);
      if (reply.op !== 'count') throw internalError('the engine worker answered another question', undefined);
      return reply.pages;
    },
    async extract(input: EngineJob, options?: EngineCallOptions): Promise<EngineOutput> {
      const reply = await run({ id: nextId++, op: 'extract', input }, input.bytes, options);
      if (reply.op !== 'extract') throw internalError('the engine worker answered another question', undefined);
      return reply.output;
    },
    async close(): Promise<void> {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('the engine was closed before it read this document'));
      await Promise.all(slots.splice(0).map((s) => s.worker.terminate()));
    },
  };
}

/** Checked before a worker reads anything: a file the engine cannot hold is refused from its size alone. */
async function refuseTooLarge(source: EngineSource, maxFileBytes: number): Promise<void> {
  const size = source instanceof Uint8Array ? source.length : (await stat(source.path)).size;
  if (size > maxFileBytes) {
    throw new EngineError(
      'too_large',
      `the file is ${size} bytes; the emulator's engine reads files up to ${maxFileBytes} bytes (the real service has no such ceiling): rehearse with a smaller file`,
    );
  }
}

function internalError(message: string, stack: string | undefined): Error {
  const e = new Error(`engine failure: ${message}; this is a bug in the engine, please report it with the document`);
  if (stack) e.stack = `${e.message}\n--- in the engine worker ---\n${stack}`;
  return e;
}
