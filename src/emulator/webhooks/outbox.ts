import type { DatabaseSync } from 'node:sqlite';
import type { Delivery, WebhookPayload } from '../../contract/index.ts';

/**
 * The durable outbox: a delivery is stored (in the transaction that completes its
 * document) before its first attempt, and every attempt is recorded against it.
 */
type Row = {
  delivery_id: string;
  event_id: string;
  document_id: string;
  parser_id: string;
  integration_id: string;
  payload: string;
  test: number;
  state: Delivery['state'];
  attempts: number;
  next_at: number | null;
  created_at: number;
};
type AttemptRow = {
  delivery_id: string;
  attempt: number;
  at: number;
  status: number | null;
  error: string | null;
  latency_ms: number;
  response_excerpt: string | null;
};

export type DueDelivery = {
  delivery_id: string;
  integration_id: string;
  document_id: string;
  payload: string;
  attempts: number;
};
export type AttemptResult = {
  status: number | null;
  error: string | null;
  latency_ms: number;
  response_excerpt: string | null;
};
export type DeliveryFilter = {
  integration?: string | undefined;
  document_id?: string | undefined;
  outcome?: Delivery['state'] | undefined;
};

export type Outbox = ReturnType<typeof createOutbox>;

export function createOutbox(db: DatabaseSync) {
  const insert = db.prepare(
    `INSERT OR IGNORE INTO deliveries (delivery_id, event_id, document_id, parser_id, integration_id, payload, test, state, attempts, next_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
  );
  const due = db.prepare(
    `SELECT delivery_id, integration_id, document_id, payload, attempts FROM deliveries WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, created_at LIMIT 200`,
  );
  const nextDue = db.prepare(
    `SELECT delivery_id, next_at AS at FROM deliveries WHERE state = 'pending' ORDER BY next_at LIMIT ?`,
  );
  const addAttempt = db.prepare(
    `INSERT INTO delivery_attempts (delivery_id, attempt, at, status, error, latency_ms, response_excerpt) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const settle = db.prepare(`UPDATE deliveries SET attempts = ?, state = ?, next_at = ? WHERE delivery_id = ?`);
  const byId = db.prepare('SELECT * FROM deliveries WHERE delivery_id = ?');
  const attemptsOf = db.prepare('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY seq');
  const requeue = db.prepare(`UPDATE deliveries SET state = 'pending', next_at = ? WHERE delivery_id = ?`);
  const failedSince = db.prepare(`SELECT delivery_id FROM deliveries WHERE state = 'failed' AND created_at >= ?`);

  const view = (r: Row): Delivery => ({
    delivery_id: r.delivery_id,
    event_id: r.event_id,
    document_id: r.document_id,
    parser_id: r.parser_id,
    integration_id: r.integration_id,
    test: r.test === 1,
    state: r.state,
    next_attempt_at: r.state === 'pending' && r.next_at !== null ? new Date(r.next_at).toISOString() : null,
    created_at: new Date(r.created_at).toISOString(),
    attempts: (attemptsOf.all(r.delivery_id) as AttemptRow[]).map((a) => ({
      attempt: a.attempt,
      at: new Date(a.at).toISOString(),
      status: a.status,
      error: a.error,
      latency_ms: a.latency_ms,
      response_excerpt: a.response_excerpt,
    })),
  });

  return {
    /** Stores one delivery; a second one for the same document and integration is ignored. */
    add(
      d: { delivery_id: string; event_id: string; integration_id: string; payload: WebhookPayload; test?: boolean },
      nowMs: number,
    ) {
      insert.run(
        d.delivery_id,
        d.event_id,
        d.payload.document_id,
        d.payload.parser_id,
        d.integration_id,
        JSON.stringify(d.payload),
        d.test ? 1 : 0,
        nowMs,
        nowMs,
      );
    },
    due(nowMs: number): DueDelivery[] {
      return due.all(nowMs) as DueDelivery[];
    },
    /** When the next pending delivery is due, leaving out those being sent now (`inFlight`): they are not due again until they end. */
    nextDueAt(inFlight: ReadonlySet<string> = new Set()): number | null {
      const rows = nextDue.all(inFlight.size + 1) as Array<{ delivery_id: string; at: number | null }>;
      return rows.find((r) => !inFlight.has(r.delivery_id))?.at ?? null;
    },
    /** Records an attempt and moves the delivery on: delivered, retried at `retryAt`, or failed when it is null. */
    record(d: DueDelivery, result: AttemptResult, atMs: number, retryAt: number | null) {
      const n = d.attempts + 1;
      addAttempt.run(d.delivery_id, n, atMs, result.status, result.error, result.latency_ms, result.response_excerpt);
      const ok = result.status !== null && result.status >= 200 && result.status < 300;
      settle.run(n, ok ? 'delivered' : retryAt === null ? 'failed' : 'pending', ok ? null : retryAt, d.delivery_id);
    },
    get(deliveryId: string): Delivery | undefined {
      const r = byId.get(deliveryId) as Row | undefined;
      return r && view(r);
    },
    list(filter: DeliveryFilter, limit = 500): Delivery[] {
      const where: string[] = [];
      const args: string[] = [];
      if (filter.integration) {
        where.push('integration_id = ?');
        args.push(filter.integration);
      }
      if (filter.document_id) {
        where.push('document_id = ?');
        args.push(filter.document_id);
      }
      if (filter.outcome) {
        where.push('state = ?');
        args.push(filter.outcome);
      }
      const sql = `SELECT * FROM deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, delivery_id LIMIT ${Math.max(1, Math.min(limit, 5000))}`;
      return (db.prepare(sql).all(...args) as Row[]).map(view);
    },
    /** Sends a delivery again now, whatever its state; the same event and document_id. */
    resend(deliveryId: string, nowMs: number): boolean {
      return requeue.run(nowMs, deliveryId).changes === 1;
    },
    /** Re-queues every failed delivery created since `sinceMs`; returns how many. */
    recover(sinceMs: number, nowMs: number): number {
      const ids = (failedSince.all(sinceMs) as Array<{ delivery_id: string }>).map((r) => r.delivery_id);
      for (const id of ids) requeue.run(nowMs, id);
      return ids.length;
    },
  };
}
