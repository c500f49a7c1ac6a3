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

export type Idempotency = {
  /** The stored answer for this key, or null when the request should run. */
  begin(parserId: string, key: string, body: unknown, nowMs: number): unknown | null;
  finish(parserId: string, key: string, response: unknown): void;
  abort(parserId: string, key: string): void;
};

export function createIdempotency(db: DatabaseSync): Idempotency {
  db.exec(`CREATE TABLE IF NOT EXISTS idempotency (
    parser_id TEXT NOT NULL, key TEXT NOT NULL, request_hash TEXT NOT NULL,
    response TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (parser_id, key))`);
  // Requests that were running when the server stopped died with it; their keys are free.
  db.exec('DELETE FROM idempotency WHERE response IS NULL');
  const get = db.prepare('SELECT request_hash, response, created_at FROM idempotency WHERE parser_id = ? AND key = ?');
  const put = db.prepare(
    'INSERT OR REPLACE INTO idempotency (parser_id, key, request_hash, response, created_at) VALUES (?, ?, ?, NULL, ?)',
  );
  const done = db.prepare('UPDATE idempotency SET response = ? WHERE parser_id = ? AND key = ?');
  const del = db.prepare('DELETE FROM idempotency WHERE parser_id = ? AND key = ?');
  const hash = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

  return {
    begin(parserId, key, body, nowMs) {
      if (key.length === 0 || key.length > 255) {
        throw new GatewayError('invalid_request', 'Idempotency-Key must be 1 to 255 characters');
      }
      const requestHash = hash(body);
      const prior = get.get(parserId, key) as
        | { request_hash: string; response: string | null; created_at: number }
        | undefined;
      if (prior && nowMs - prior.created_at < IDEMPOTENCY_TTL_MS) {
        if (prior.request_hash !== requestHash) {
          throw new GatewayError(
            'invalid_request',
            'this Idempotency-Key was used with a different request body: use a new key for a new request',
          );
        }
        if (prior.response === null) {
          throw new GatewayError(
            'conflict',
            'a request with this Idempotency-Key is still running: wait for it, then retry',
          );
        }
        return JSON.parse(prior.response) as unknown;
      }
      put.run(parserId, key, requestHash, nowMs);
      return null;
    },
    finish(parserId, key, response) {
      done.run(JSON.stringify(response), parserId, key);
    },
    abort(parserId, key) {
      del.run(parserId, key);
    },
  };
}
