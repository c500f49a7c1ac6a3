import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WorkerReply, WorkerRequest } from './protocol.ts';
import { type Engine, EngineError, type EngineInput, type EngineOutput } from './types.ts';

/**
 * The extraction engine as the emulator uses it: a small pool of worker threads, so that
 * reading a 300-page PDF never blocks the API's event loop. Each worker reads one document
 * at a time; more requests wait in order. Idle workers do not keep the process alive.
 */

export { extractInProcess, countPagesInProcess } from './extract.ts';
export { EngineError } from './types.ts';
export type { Engine, EngineErrorCode, EngineInput, EngineOutput } from './types.ts';

export type EngineOptions = { workers?: number };

type Job = {
  request: WorkerRequest;
  resolve: (reply: WorkerReply & { ok: true }) => void;
  reject: (error: Error) => void;
};
type Slot = { worker: Worker; job: Job | null };

/** dist/engine/worker.js after a build; the .ts source under vitest (Node strips its types). */
function workerUrl(): URL {
  const js = new URL('./worker.js', import.meta.url);
  return existsSync(fileURLToPath(js)) ? js : new URL('./worker.ts', import.meta.url);
}

export function createEngine(options: EngineOptions = {}): Engine {
  const size = Math.max(1, options.workers ?? Math.min(2, availableParallelism()));
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): Slot {
    const worker = new Worker(workerUrl());
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
    const lost = (why: string) => {
      const job = slot.job;
      slot.job = null;
      const i = slots.indexOf(slot);
      if (i >= 0) slots.splice(i, 1);
      if (job) job.reject(internalError(`the engine worker stopped while reading a document (${why})`, undefined));
      if (!closed) dispatch();
    };
    worker.on('error', (e) => lost(e.message));
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

  function run(request: WorkerRequest): Promise<WorkerReply & { ok: true }> {
    if (closed) return Promise.reject(new Error('the engine is closed'));
    return new Promise((resolve, reject) => {
      queue.push({ request, resolve, reject });
      dispatch();
    });
  }

  return {
    async countPages(bytes: Uint8Array, mimeType: string): Promise<number> {
      const reply = await run({ id: nextId++, op: 'count', bytes, mimeType });
      if (reply.op !== 'count') throw internalError('the engine worker answered another question', undefined);
      return reply.pages;
    },
    async extract(input: EngineInput): Promise<EngineOutput> {
      const reply = await run({ id: nextId++, op: 'extract', input });
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

function internalError(message: string, stack: string | undefined): Error {
  const e = new Error(`engine failure: ${message}; this is a bug in the engine, please report it with the document`);
  if (stack) e.stack = `${e.message}\n--- in the engine worker ---\n${stack}`;
  return e;
}
