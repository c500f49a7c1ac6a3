import type { EngineErrorCode, EngineJob, EngineOutput, EngineSource } from './types.ts';

/** Messages between the engine's pool (index.ts) and its workers (worker.ts). */

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
