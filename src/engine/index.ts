import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type WorkerReply, type WorkerRequest, WATCHDOG_SIGNAL } from './protocol.ts';
import { MAX_ENGINE_FILE_BYTES } from '../contract/constants.ts';
import { BUNDLED, PACKAGE_ROOT } from '../package-root.ts';
import {
  type Engine,
  type EngineCallOptions,
  EngineClosedError,
  EngineError,
  NEEDS_MORE_MEMORY,
  type EngineJob,
  type EngineOutput,
  type EngineSource,
} from './types.ts';

/**
 * The extraction engine as the emulator uses it: a small pool of child processes, so that reading
 * a 300-page PDF never blocks the API's event loop, and whatever a document makes the reader hold
 * (pdfjs's decoded streams are ArrayBuffers, outside any V8 heap limit) is bounded by a limit the
 * pool enforces from outside and given back to the OS when it kills the process:
 *
 * - memory: each process's resident size (VmRSS in /proc/<pid>/status) is read every
 *   WATCH_INTERVAL_MS while it reads a document; past `memoryMb` it is killed and the document is
 *   refused as too_large. Its V8 heap has a limit too (--max-old-space-size=heapMb), and running out of it is too_large as well.
 * - time: the caller's signal (a deadline) kills the process reading its document.
 * - fairness: a document read for longer than `slowMs` is slow. When fresh documents wait and no
 *   process is free, slow documents may hold at most `workers - 1` processes: the slowest beyond that
 *   is stopped and queued again behind every fresh document (it starts over later, with the time it
 *   has left under its caller's deadline). So documents that take long (a bomb of work, or a huge
 *   honest one) never hold every process while others wait.
 *
 * Processes start when a document finds none idle (none before the first document, none spare), up
 * to `workers`; once started they stay, idle and warm (unref'd: they keep nothing alive), until a
 * kill or `close()`, which kills them at once.
 */

export { EngineClosedError, EngineError, MAX_ENGINE_FILE_BYTES } from './types.ts';
export type { Engine, EngineErrorCode, EngineInput, EngineJob, EngineOutput, EngineSource, FileRef } from './types.ts';

/**
 * workers: processes at most. heapMb: each process's V8 heap limit. memoryMb: each process's
 * resident memory limit (the watchdog's). slowMs: when a document's reading counts as slow (fairness).
 */
export type EngineOptions = {
  workers?: number;
  heapMb?: number;
  memoryMb?: number;
  slowMs?: number;
  maxFileBytes?: number;
  /** The clock the fairness rule reads (tests inject one). */
  now?: () => number;
  /** The worker script each process runs: by default the one beside this module (the bundle's, or src/'s under a test). */
  worker?: string;
};

/** Each process's V8 heap limit (at most its resident limit): room for a 300-page PDF, not for a bomb of objects. */
export const ENGINE_HEAP_MB = 512;
/** Each process's resident memory limit: a 300-page PDF or an OCR'd scan needs well under half of it. */
export const ENGINE_MEMORY_MB = 1024;
/** A document read for longer than this is slow: it may be stopped and queued again behind fresh ones. */
export const ENGINE_SLOW_MS = 5000;
/** How often a busy process's resident memory is read. */
export const WATCH_INTERVAL_MS = 100;

type Job = {
  request: WorkerRequest;
  resolve: (reply: WorkerReply & { ok: true }) => void;
  reject: (error: Error) => void;
  signal: AbortSignal | undefined;
  /** Times it was stopped to let fresh documents through. */
  requeued: number;
  /** Times the process reading it was killed by a signal it did not earn. */
  killed: number;
};
type Slot = { child: ChildProcess; job: Job | null; startedAt: number; stopping: 'memory' | 'requeue' | null };

/** The bundle's worker entry (dist/engine/worker.js) after a build; the .ts source under vitest (Node strips its types). */
function workerPath(): string {
  return BUNDLED
    ? join(PACKAGE_ROOT, 'dist', 'engine', 'worker.js')
    : fileURLToPath(new URL('./worker.ts', import.meta.url));
}

/**
 * How a process that ran out of memory ends: its watchdog thread's signal, V8's fatal heap error
 * (abort). The pool's own kills mark the slot stopping or take its job first. Any other signal (a
 * SIGKILL from the system's OOM killer, an operator or a supervisor) says nothing about the
 * document: it is read again, up to MAX_KILLS times.
 */
const OUT_OF_MEMORY = new Set([`signal ${WATCHDOG_SIGNAL}`, 'exit code 134', 'signal SIGABRT']);

/** Times a document's process may be killed from outside before the document is refused. */
export const MAX_KILLS = 3;

/** A process's resident memory in MB (Linux), or null when /proc cannot say (it has gone, or no /proc). */
export function residentMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * How a lost process's document ends: queued again (stopped for fairness, or killed from outside
 * fewer than MAX_KILLS times: null), too large (out of memory), or a failure of ours.
 */
function lostJobError(stopping: Slot['stopping'], why: string, memoryMb: number, killed: number): Error | null {
  if (stopping === 'requeue') return null;
  if (stopping === 'memory' || OUT_OF_MEMORY.has(why)) {
    return new EngineError(
      'too_large',
      `reading the document ${NEEDS_MORE_MEMORY} (${memoryMb} MB per engine process): a decompression bomb, or a file to split or re-save before submitting it again`,
    );
  }
  if (why.startsWith('signal ')) {
    if (killed < MAX_KILLS) return null;
    return new EngineError(
      'too_large',
      `the engine process reading the document was killed ${killed} times (${why}) before it reached the memory limit: the system's out-of-memory killer or another process; submit it again when the machine has memory to spare, or split the file`,
    );
  }
  return internalError(`the engine process stopped while reading a document (${why})`, undefined);
}

/**
 * Fairness: with fresh documents waiting and every process busy, the slow readings (read for
 * `slowMs` or more) beyond `size - 1` are the ones to stop, the longest-running first.
 */
export function slowToStop<S extends { startedAt: number }>(slow: readonly S[], size: number): S[] {
  const keep = size - 1;
  if (slow.length <= keep) return [];
  return [...slow].sort((a, b) => a.startedAt - b.startedAt).slice(0, slow.length - keep);
}

/** The engine as a pool of child processes (see above); `close()` kills them all. */
export class EnginePool implements Engine {
  readonly #size: number;
  readonly #memoryMb: number;
  readonly #heapMb: number;
  readonly #worker: string;
  readonly #slowMs: number;
  readonly #now: () => number;
  readonly #maxFileBytes: number;
  readonly #slots: Slot[] = [];
  /** Documents not yet read, in arrival order; then those stopped for running long, read when none waits. */
  readonly #fresh: Job[] = [];
  readonly #again: Job[] = [];
  #nextId = 1;
  #closed = false;
  #watch: NodeJS.Timeout | undefined;

  constructor(options: EngineOptions = {}) {
    this.#size = Math.max(1, options.workers ?? Math.min(2, availableParallelism()));
    this.#memoryMb = options.memoryMb ?? ENGINE_MEMORY_MB;
    this.#heapMb = Math.min(options.heapMb ?? ENGINE_HEAP_MB, this.#memoryMb);
    this.#worker = options.worker ?? workerPath();
    this.#slowMs = options.slowMs ?? ENGINE_SLOW_MS;
    this.#now = options.now ?? Date.now;
    this.#maxFileBytes = Math.min(options.maxFileBytes ?? MAX_ENGINE_FILE_BYTES, MAX_ENGINE_FILE_BYTES);
  }

  async countPages(bytes: EngineSource, mimeType: string, options?: EngineCallOptions): Promise<number> {
    const reply = await this.#run({ id: this.#nextId++, op: 'count', bytes, mimeType }, bytes, options);
    if (reply.op !== 'count') throw internalError('the engine worker answered another question', undefined);
    return reply.pages;
  }

  async extract(input: EngineJob, options?: EngineCallOptions): Promise<EngineOutput> {
    const reply = await this.#run({ id: this.#nextId++, op: 'extract', input }, input.bytes, options);
    if (reply.op !== 'extract') throw internalError('the engine worker answered another question', undefined);
    return reply.output;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#watch) clearInterval(this.#watch);
    this.#watch = undefined;
    for (const job of [...this.#fresh.splice(0), ...this.#again.splice(0)])
      job.reject(new EngineClosedError('the engine was closed before it read this document'));
    const all = this.#slots.splice(0);
    await Promise.all(
      all.map(async (slot) => {
        const job = slot.job;
        slot.job = null;
        job?.reject(new EngineClosedError('the engine was closed while it read this document'));
        if (slot.child.exitCode !== null || slot.child.signalCode !== null) return;
        const exited = once(slot.child, 'exit');
        // Referenced until it has exited, so the wait holds the event loop.
        slot.child.ref();
        slot.child.kill('SIGKILL');
        await exited;
      }),
    );
  }

  async #run(
    request: WorkerRequest,
    source: EngineSource,
    options: EngineCallOptions = {},
  ): Promise<WorkerReply & { ok: true }> {
    if (this.#closed) throw new EngineClosedError('the engine is closed');
    await refuseTooLarge(source, this.#maxFileBytes);
    const signal = options.signal;
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = () => this.#cancel(job);
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
        requeued: 0,
        killed: 0,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#fresh.push(job);
      this.#dispatch();
    });
  }

  #spawn(): Slot {
    const child = fork(this.#worker, [], {
      // The parent's flags (a loader hook, say) and the heap limit.
      execArgv: [
        ...process.execArgv.filter((a) => !a.startsWith('--max-old-space-size')),
        `--max-old-space-size=${this.#heapMb}`,
      ],
      env: { ...process.env, EXTRACT_ENGINE_MEMORY_MB: String(this.#memoryMb) },
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const slot: Slot = { child, job: null, startedAt: 0, stopping: null };
    idle(slot);
    child.on('message', (reply: WorkerReply) => this.#answered(slot, reply));
    child.once('error', (e: Error) => {
      child.kill('SIGKILL');
      this.#lost(slot, e.message);
    });
    child.once('exit', (code, signal) => this.#lost(slot, signal ? `signal ${signal}` : `exit code ${code}`));
    this.#slots.push(slot);
    return slot;
  }

  #answered(slot: Slot, reply: WorkerReply): void {
    const job = slot.job;
    if (!job || job.request.id !== reply.id) return;
    slot.job = null;
    idle(slot);
    if (reply.ok) job.resolve(reply);
    else if (reply.error.kind === 'engine') job.reject(new EngineError(reply.error.code, reply.error.message));
    else job.reject(internalError(reply.error.message, reply.error.stack));
    this.#dispatch();
  }

  #lost(slot: Slot, why: string): void {
    const job = slot.job;
    slot.job = null;
    const i = this.#slots.indexOf(slot);
    if (i >= 0) this.#slots.splice(i, 1);
    if (job && slot.stopping === null && why.startsWith('signal ') && !OUT_OF_MEMORY.has(why)) job.killed++;
    // Stopped to let fresh documents through (already queued again), or killed from outside: read
    // again from the start, first in line (its caller has waited longest).
    const error = job && lostJobError(slot.stopping, why, this.#memoryMb, job.killed);
    if (job && error) job.reject(error);
    else if (job && slot.stopping === null) this.#fresh.unshift(job);
    if (!this.#closed) this.#dispatch();
  }

  #stop(slot: Slot, why: 'memory' | 'requeue'): void {
    if (slot.stopping) return;
    slot.stopping = why;
    slot.child.kill('SIGKILL');
  }

  #dispatch(): void {
    if (this.#closed) return;
    for (;;) {
      const queue = this.#fresh.length > 0 ? this.#fresh : this.#again;
      if (queue.length === 0) break;
      const free =
        this.#slots.find((s) => s.job === null && !s.stopping) ??
        (this.#slots.length < this.#size ? this.#spawn() : undefined);
      if (!free) {
        if (this.#fresh.length > 0) this.#makeRoom();
        break;
      }
      const job = queue.shift()!;
      free.job = job;
      free.startedAt = this.#now();
      free.child.ref();
      free.child.channel?.ref();
      free.child.send(job.request);
    }
    this.#watching();
  }

  /** Fresh documents wait and every process is busy: slow documents keep at most size - 1 of them. */
  #makeRoom(): void {
    const t = this.#now();
    const slow = this.#slots.filter((s) => s.job !== null && !s.stopping && t - s.startedAt >= this.#slowMs);
    for (const slot of slowToStop(slow, this.#size)) {
      const job = slot.job!;
      job.requeued++;
      this.#again.push(job);
      this.#stop(slot, 'requeue');
    }
  }

  /** While any process reads, its memory is read every WATCH_INTERVAL_MS, and fairness is checked. */
  #watching(): void {
    const busy = this.#slots.some((s) => s.job !== null);
    if (busy && !this.#watch) {
      this.#watch = setInterval(() => this.#tick(), WATCH_INTERVAL_MS);
      this.#watch.unref();
    } else if (!busy && this.#watch) {
      clearInterval(this.#watch);
      this.#watch = undefined;
    }
  }

  #tick(): void {
    for (const slot of this.#slots) {
      if (slot.job === null || slot.stopping || slot.child.pid === undefined) continue;
      const mb = residentMb(slot.child.pid);
      if (mb !== null && mb > this.#memoryMb) this.#stop(slot, 'memory');
    }
    if (this.#fresh.length > 0) this.#dispatch();
    this.#watching();
  }

  /** A cancelled job leaves its queue, or its process is killed (a new one is spawned for the next job). */
  #cancel(job: Job): void {
    for (const queue of [this.#fresh, this.#again]) {
      const queued = queue.indexOf(job);
      if (queued >= 0) queue.splice(queued, 1);
    }
    const slot = this.#slots.find((s) => s.job === job);
    if (slot) {
      slot.job = null;
      this.#slots.splice(this.#slots.indexOf(slot), 1);
      slot.child.kill('SIGKILL');
    }
    job.reject(job.signal?.reason instanceof Error ? job.signal.reason : new Error('the engine call was cancelled'));
    this.#dispatch();
  }
}

/** An idle process keeps nothing alive (its channel and handle are unref'd); a busy one does. */
function idle(slot: Slot): void {
  slot.child.unref();
  slot.child.channel?.unref();
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
