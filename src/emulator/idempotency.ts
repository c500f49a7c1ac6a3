import { createHash } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { GatewayError } from './errors.ts';

/**
 * Idempotency-Key on POST extract (the emulator's; the spec does not promise it): the
 * same key within a day returns the first answer and charges nothing more. Only
 * successful answers are kept; after an error the key is free again, so a retry after a
 * 402 and a top-up goes through.
 */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

type Prior = { request_hash: string; response: string | null; created_at: number };

/** A key's request, or the answer a first request with it gave. */
export type Once<T> = { ran: T } | { replayed: unknown };

/** The header's length, as services that honour it bound it. */
function checkKey(key: string): void {
  if (key.length === 0 || key.length > 255) {
    throw new GatewayError('invalid_request', 'Idempotency-Key must be 1 to 255 characters');
  }
}

/** What a prior use of the key within the day means for this request: its answer, or a refusal. */
function replayOf(prior: Prior, requestHash: string): unknown {
  if (prior.request_hash !== requestHash) {
    throw new GatewayError(
      'invalid_request',
      'this Idempotency-Key was used with a different request body: use a new key for a new request',
    );
  }
  if (prior.response === null) {
    throw new GatewayError('conflict', 'a request with this Idempotency-Key is still running: wait for it, then retry');
  }
  return JSON.parse(prior.response) as unknown;
}

const hashOf = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

/** Every statement of the idempotency table, prepared once. */
function statements(db: DatabaseSync) {
  return {
    get: db.prepare('SELECT request_hash, response, created_at FROM idempotency WHERE parser_id = ? AND key = ?'),
    put: db.prepare(
      'INSERT OR REPLACE INTO idempotency (parser_id, key, request_hash, response, created_at) VALUES (?, ?, ?, NULL, ?)',
    ),
    done: db.prepare('UPDATE idempotency SET response = ? WHERE parser_id = ? AND key = ?'),
    del: db.prepare('DELETE FROM idempotency WHERE parser_id = ? AND key = ?'),
  };
}

export class Idempotency {
  readonly #honoured: boolean;
  readonly #sql: ReturnType<typeof statements>;

  /** honoured false: the header is ignored, as by a service that does not honour it (config `idempotency_key`). */
  constructor(db: DatabaseSync, options: { honoured?: boolean } = {}) {
    this.#honoured = options.honoured ?? true;
    db.exec(`CREATE TABLE IF NOT EXISTS idempotency (
      parser_id TEXT NOT NULL, key TEXT NOT NULL, request_hash TEXT NOT NULL,
      response TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (parser_id, key))`);
    // Requests that were running when the server stopped died with it; their keys are free.
    db.exec('DELETE FROM idempotency WHERE response IS NULL');
    this.#sql = statements(db);
  }

  /**
   * Runs a request at most once per parser and key within a day. `run` gets `record`, to call
   * with its answer inside the transaction that creates (storage path) or completes (inline) the
   * document: a kill between the two would free the key of a charged document. No key (or keys
   * not honoured): `run` runs, with nothing to record. A failed run frees the key.
   */
  async once<T>(
    request: { parserId: string; key: string | undefined; body: unknown; nowMs: number },
    run: (record?: (answer: T) => void) => Promise<T>,
  ): Promise<Once<T>> {
    const { parserId, key } = request;
    if (key === undefined || !this.#honoured) return { ran: await run() };
    checkKey(key);
    const requestHash = hashOf(request.body);
    const prior = this.#sql.get.get(parserId, key) as Prior | undefined;
    if (prior && request.nowMs - prior.created_at < IDEMPOTENCY_TTL_MS)
      return { replayed: replayOf(prior, requestHash) };
    this.#sql.put.run(parserId, key, requestHash, request.nowMs);
    try {
      return { ran: await run((answer) => this.#sql.done.run(JSON.stringify(answer), parserId, key)) };
    } catch (err) {
      this.#sql.del.run(parserId, key);
      throw err;
    }
  }
}
