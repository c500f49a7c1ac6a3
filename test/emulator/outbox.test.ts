import { describe, expect, it } from 'vitest';
import type { WebhookPayload } from '../../src/contract/index.ts';
import { openStore } from '../../src/emulator/store.ts';
import { Outbox, stateAfter } from '../../src/emulator/webhooks/outbox.ts';

/** The durable outbox's rules, over an in-memory store: no HTTP, no clock but the numbers passed. */

const answer = (status: number | null) => ({ status, error: null, latency_ms: 1, response_excerpt: null });
const payload = (documentId: string) => ({ document_id: documentId, parser_id: 'prs_a' }) as WebhookPayload;

describe('outbox', () => {
  it('outbox: a 2xx delivers; anything else retries when a retry is scheduled, and fails when none is', () => {
    for (const status of [200, 204, 299])
      expect(stateAfter(answer(status), 5)).toEqual({ state: 'delivered', nextAt: null });
    for (const status of [null, 199, 300, 404, 500]) {
      expect(stateAfter(answer(status), 5)).toEqual({ state: 'pending', nextAt: 5 });
      expect(stateAfter(answer(status), null)).toEqual({ state: 'failed', nextAt: null });
    }
  });

  it('outbox: a delivery is due at once, then at its retry; a failed one is recovered; filters narrow the list', () => {
    const outbox = new Outbox(openStore({ inMemory: true }).db);
    outbox.add({ delivery_id: 'd1', event_id: 'e1', integration_id: 'i1', payload: payload('doc_1') }, 1000);
    outbox.add({ delivery_id: 'd2', event_id: 'e2', integration_id: 'i2', payload: payload('doc_2') }, 1000);
    // The same document and integration again, under another delivery id, is ignored.
    outbox.add({ delivery_id: 'd3', event_id: 'e9', integration_id: 'i1', payload: payload('doc_1') }, 1000);
    expect(outbox.due(1000)).toHaveLength(2);
    const [first, second] = outbox.due(1000);
    expect([first?.delivery_id, second?.delivery_id]).toEqual(['d1', 'd2']);
    outbox.record(first!, answer(500), 1000, 4000);
    outbox.record(second!, answer(500), 1000, null);
    expect(outbox.due(3999)).toEqual([]);
    expect(outbox.nextDueAt()).toBe(4000);
    expect(outbox.nextDueAt(new Set(['d1']))).toBeNull();
    expect(outbox.get('d1')).toMatchObject({ state: 'pending', attempts: [{ attempt: 1, status: 500 }] });
    expect(outbox.list({ outcome: 'failed' }).map((d) => d.delivery_id)).toEqual(['d2']);
    expect(outbox.list({ integration: 'i1', document_id: 'doc_1' }).map((d) => d.delivery_id)).toEqual(['d1']);
    expect(outbox.list({ integration: 'i1', document_id: 'doc_2' })).toEqual([]);
    expect(outbox.recover(0, 5000)).toBe(1);
    expect(outbox.get('d2')).toMatchObject({ state: 'pending', next_attempt_at: new Date(5000).toISOString() });
    outbox.record(outbox.due(5000).find((d) => d.delivery_id === 'd2')!, answer(200), 5000, 9000);
    expect(outbox.get('d2')).toMatchObject({ state: 'delivered', next_attempt_at: null });
    expect(outbox.resend('d2', 6000)).toBe(true);
    expect(outbox.resend('d404', 6000)).toBe(false);
  });
});
