import { parentPort } from 'node:worker_threads';
import { countPagesInProcess, extractInProcess } from './extract.ts';
import type { WorkerReply, WorkerRequest } from './protocol.ts';
import { EngineError } from './types.ts';

/**
 * One engine worker: reads one document at a time, off the server's event loop. The pool
 * (index.ts) runs it as a child process, so the OS reclaims everything a document made it hold
 * when the pool kills it; it also still answers as a worker thread (`parentPort`).
 */

/** A stored file is read here, in the worker, so its bytes never pass through the server's thread. */
async function handle(request: WorkerRequest): Promise<WorkerReply> {
  try {
    if (request.op === 'count') {
      return {
        id: request.id,
        ok: true,
        op: 'count',
        pages: await countPagesInProcess(request.bytes, request.mimeType),
      };
    }
    const output = await extractInProcess(request.input);
    return { id: request.id, ok: true, op: 'extract', output };
  } catch (e) {
    if (e instanceof EngineError)
      return { id: request.id, ok: false, error: { kind: 'engine', code: e.code, message: e.message } };
    const message = e instanceof Error ? e.message : String(e);
    const stack = e instanceof Error ? e.stack : undefined;
    return { id: request.id, ok: false, error: { kind: 'internal', message, stack } };
  }
}

const port = parentPort;
if (port) {
  port.on('message', (request: WorkerRequest) => void handle(request).then((reply) => port.postMessage(reply)));
} else if (process.send) {
  const send = process.send.bind(process);
  process.on('message', (request: WorkerRequest) => void handle(request).then((reply) => send(reply)));
  // The pool is gone (serve was killed): nothing will read an answer, so stop.
  process.on('disconnect', () => process.exit(0));
  // The pool kills this process past its memory limit; should the pool be gone, the process stops itself
  // (checked whenever the reading yields, which pdfjs does every few milliseconds).
  const limitBytes = Number(process.env.EXTRACT_ENGINE_MEMORY_MB ?? 0) * 1024 * 1024;
  if (limitBytes > 0) {
    setInterval(() => {
      if (process.memoryUsage.rss() > limitBytes) process.exit(137);
    }, 250).unref();
  }
}
