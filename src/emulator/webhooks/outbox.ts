import type { DatabaseSync } from 'node:sqlite';
import type { DeliveriesQuery, Delivery, WebhookPayload } from '../../contract/index.ts';

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
export type AttemptResult = Omit<Delivery['attempts'][number], 'attempt' | 'at'>;
type AttemptRow = AttemptResult & { delivery_id: string; attempt: number; at: number };

export type DueDelivery = {
  delivery_id: string;
  integration_id: string;
  document_id: string;
  payload: string;
  attempts: number;
};
export type DeliveryFilter = Omit<DeliveriesQuery, 'limit'>;

/** An attempt's answer decides the delivery's next state: delivered on a 2xx, else retried at `retryAt`, or failed when there is none. */
export function stateAfter(
  result: AttemptResult,
  retryAt: number | null,
): { state: Delivery['state']; nextAt: number | null } {
  const ok = result.status !== null && result.status >= 200 && result.status < 300;
  if (ok) return { state: 'delivered', nextAt: null };
  return retryAt === null ? { state: 'failed', nextAt: null } : { state: 'pending', nextAt: retryAt };
}

/** A filter as an SQL condition and its arguments. */
function whereOf(filter: DeliveryFilter): { sql: string; args: string[] } {
  const conditions: Array<[string, string | undefined]> = [
    ['integration_id = ?', filter.integration],
    ['document_id = ?', filter.document_id],
    ['state = ?', filter.outcome],
  ];
  const used = conditions.filter((c): c is [string, string] => Boolean(c[1]));
  return {
    sql: used.length ? `WHERE ${used.map(([sql]) => sql).join(' AND ')}` : '',
    args: used.map(([, arg]) => arg),
  };
}

/** A stored delivery and its attempts as the emulator's surface shows them. */
function deliveryView(r: Row, attempts: readonly AttemptRow[]): Delivery {
  return {
    delivery_id: r.delivery_id,
    event_id: r.event_id,
    document_id: r.document_id,
    parser_id: r.parser_id,
    integration_id: r.integration_id,
    test: r.test === 1,
    state: r.state,
    next_attempt_at: r.state === 'pending' && r.next_at !== null ? new Date(r.next_at).toISOString() : null,
    created_at: new Date(r.created_at).toISOString(),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      at: new Date(a.at).toISOString(),
      status: a.status,
      error: a.error,
      latency_ms: a.latency_ms,
      response_excerpt: a.response_excerpt,
    })),
  };
}

/** Every statement of the outbox, prepared once. */
function statements(db: DatabaseSync) {
  return {
    insert: db.prepare(
      `INSERT OR IGNORE INTO deliveries (delivery_id, event_id, document_id, parser_id, integration_id, payload, test, state, attempts, next_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
    ),
    due: db.prepare(
      `SELECT delivery_id, integration_id, document_id, payload, attempts FROM deliveries WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, created_at LIMIT 200`,
    ),
    nextDue: db.prepare(
      `SELECT delivery_id, next_at AS at FROM deliveries WHERE state = 'pending' ORDER BY next_at LIMIT ?`,
    ),
    addAttempt: db.prepare(
      `INSERT INTO delivery_attempts (delivery_id, attempt, at, status, error, latency_ms, response_excerpt) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    settle: db.prepare(`UPDATE deliveries SET attempts = ?, state = ?, next_at = ? WHERE delivery_id = ?`),
    byId: db.prepare('SELECT * FROM deliveries WHERE delivery_id = ?'),
    attemptsOf: db.prepare('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY seq'),
    requeue: db.prepare(`UPDATE deliveries SET state = 'pending', next_at = ? WHERE delivery_id = ?`),
    failedSince: db.prepare(`SELECT delivery_id FROM deliveries WHERE state = 'failed' AND created_at >= ?`),
  };
}

export class Outbox {
  readonly #db: DatabaseSync;
  readonly #sql: ReturnType<typeof statements>;

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#sql = statements(db);
  }

  /** Stores one delivery; a second one for the same document and integration is ignored. */
  add(
    d: { delivery_id: string; event_id: string; integration_id: string; payload: WebhookPayload; test?: boolean },
    nowMs: number,
  ): void {
    this.#sql.insert.run(
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
  }

  due(nowMs: number): DueDelivery[] {
    return this.#sql.due.all(nowMs) as DueDelivery[];
  }

  /** When the next pending delivery is due, leaving out those being sent now (`inFlight`): they are not due again until they end. */
  nextDueAt(inFlight: ReadonlySet<string> = new Set()): number | null {
    const rows = this.#sql.nextDue.all(inFlight.size + 1) as Array<{ delivery_id: string; at: number | null }>;
    return rows.find((r) => !inFlight.has(r.delivery_id))?.at ?? null;
  }

  /** Records an attempt and moves the delivery on (stateAfter). */
  record(d: DueDelivery, result: AttemptResult, atMs: number, retryAt: number | null): void {
    const n = d.attempts + 1;
    this.#sql.addAttempt.run(
      d.delivery_id,
      n,
      atMs,
      result.status,
      result.error,
      result.latency_ms,
      result.response_excerpt,
    );
    const next = stateAfter(result, retryAt);
    this.#sql.settle.run(n, next.state, next.nextAt, d.delivery_id);
  }

  get(deliveryId: string): Delivery | undefined {
    const r = this.#sql.byId.get(deliveryId) as Row | undefined;
    return r && this.#view(r);
  }

  list(filter: DeliveryFilter, limit = 500): Delivery[] {
    const where = whereOf(filter);
    const sql = `SELECT * FROM deliveries ${where.sql} ORDER BY created_at DESC, delivery_id LIMIT ${Math.max(1, Math.min(limit, 5000))}`;
    return (this.#db.prepare(sql).all(...where.args) as Row[]).map((r) => this.#view(r));
  }

  /** Sends a delivery again now, whatever its state; the same event and document_id. */
  resend(deliveryId: string, nowMs: number): boolean {
    return this.#sql.requeue.run(nowMs, deliveryId).changes === 1;
  }

  /** Re-queues every failed delivery created since `sinceMs`; returns how many. */
  recover(sinceMs: number, nowMs: number): number {
    const ids = (this.#sql.failedSince.all(sinceMs) as Array<{ delivery_id: string }>).map((r) => r.delivery_id);
    for (const id of ids) this.#sql.requeue.run(nowMs, id);
    return ids.length;
  }

  #view(r: Row): Delivery {
    return deliveryView(r, this.#sql.attemptsOf.all(r.delivery_id) as AttemptRow[]);
  }
}
