import { parentPort, Worker } from 'node:worker_threads';
import { countPagesInProcess, extractInProcess } from './extract.ts';
import { type WorkerReply, type WorkerRequest, WATCHDOG_SIGNAL } from './protocol.ts';
import { EngineError } from './types.ts';

/**
 * One engine worker: reads one document at a time, off the server's event loop. The pool
 * (index.ts) runs it as a child process, so the OS reclaims everything a document made it hold
 * when the pool kills it; it also still answers as a worker thread (`parentPort`).
 *
 * As a child process it also runs a watchdog thread: a reading that does not yield (a huge
 * stream's inflate, a long parse) keeps the main thread from seeing the IPC channel close or its
 * own memory, so when serve is SIGKILLed (or OOM-killed) nothing else would bound it. A worker
 * thread keeps running while the main thread is busy in synchronous code; it ends the whole process
 * when the parent is gone (the parent pid changes: to 1 or a subreaper) or past the memory limit.
 */

/** How often the watchdog thread looks at the parent and the resident memory. */
const WATCHDOG_INTERVAL_MS = 250;

/**
 * The watchdog thread's code (CommonJS, evaluated: no file of its own to bundle). A signal, not
 * process.exit: from a thread, exit would end only the thread. Past the memory limit it is
 * WATCHDOG_SIGNAL, which the pool reads as "too large" (index.ts); with the parent gone, SIGKILL.
 */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { ppid, limitBytes, intervalMs, memorySignal } = workerData;
setInterval(() => {
  if (process.ppid !== ppid) process.kill(process.pid, 'SIGKILL');
  else if (limitBytes > 0 && process.memoryUsage.rss() > limitBytes) process.kill(process.pid, memorySignal);
}, intervalMs);
`;

/** Starts the watchdog thread; unref'd, so it never keeps the process alive by itself. */
function startWatchdog(limitBytes: number): void {
  const thread = new Worker(WATCHDOG, {
    eval: true,
    workerData: { ppid: process.ppid, limitBytes, intervalMs: WATCHDOG_INTERVAL_MS, memorySignal: WATCHDOG_SIGNAL },
    // A small heap: it holds a timer and a few numbers.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
    stdout: false,
    stderr: false,
  });
  thread.unref();
}

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
  // The pool kills this process past its memory limit; should the pool be gone, the watchdog thread
  // stops it, whether or not the reading yields.
  startWatchdog(Number(process.env.EXTRACT_ENGINE_MEMORY_MB ?? 0) * 1024 * 1024);
}
