import { parentPort } from 'node:worker_threads';
import { countPagesInProcess, extractInProcess } from './extract.ts';
import type { WorkerReply, WorkerRequest } from './protocol.ts';
import { EngineError } from './types.ts';

/** One engine worker: reads one document at a time, off the server's event loop. */

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
if (port) port.on('message', (request: WorkerRequest) => void handle(request).then((reply) => port.postMessage(reply)));
