import type { EngineErrorCode, EngineJob, EngineOutput, EngineSource } from './types.ts';

/** Messages between the engine's pool (index.ts) and its workers (worker.ts). */

/**
 * The signal a worker's watchdog thread ends its process with past the memory limit. Not SIGKILL,
 * which anyone may send (the system's OOM killer, an operator, a supervisor), so that the pool tells
 * a document that needs too much memory from a process killed for a reason of its own. SIGALRM:
 * nothing else sends it to an engine process, and Node leaves it at its default action (end the
 * process, at once, whatever the main thread is doing, no core file).
 */
export const WATCHDOG_SIGNAL = 'SIGALRM';

export type WorkerRequest =
  | { id: number; op: 'count'; bytes: EngineSource; mimeType: string }
  | { id: number; op: 'extract'; input: EngineJob };

/** Errors cross the thread boundary as plain data and are re-created as EngineError on the other side. */
type WorkerFailure =
  | { kind: 'engine'; code: EngineErrorCode; message: string }
  | { kind: 'internal'; message: string; stack: string | undefined };

export type WorkerReply =
  | { id: number; ok: true; op: 'count'; pages: number }
  | { id: number; ok: true; op: 'extract'; output: EngineOutput }
  | { id: number; ok: false; error: WorkerFailure };
