import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import type { DocumentBody } from '../../src/contract/index.ts';
import { FinishedBodies } from '../../src/emulator/finished-bodies.ts';
import { Idempotency } from '../../src/emulator/idempotency.ts';

/** The emulator's Idempotency-Key rule and its kept bodies, in-process: no HTTP, an injected clock. */

const DAY = 24 * 60 * 60 * 1000;
const request = (key: string | undefined, body: unknown = { a: 1 }, nowMs = 0) => ({
  parserId: 'prs_a',
  key,
  body,
  nowMs,
});
/** A run that answers with `answer`, recording it as the routes' transaction does. */
const answering =
  (answer: { document_id: string }, runs: { count: number }) =>
  async (record?: (a: { document_id: string }) => void) => {
    runs.count += 1;
    record?.(answer);
    return answer;
  };

describe('idempotency', () => {
  it('idempotency: a second request with the key within a day gets the first answer and does not run', async () => {
    const idem = new Idempotency(new DatabaseSync(':memory:'));
    const runs = { count: 0 };
    expect(await idem.once(request('k1'), answering({ document_id: 'd1' }, runs))).toEqual({
      ran: { document_id: 'd1' },
    });
    expect(await idem.once(request('k1', { a: 1 }, DAY - 1), answering({ document_id: 'd2' }, runs))).toEqual({
      replayed: { document_id: 'd1' },
    });
    expect(runs.count).toBe(1);
    // A day later the key is new again.
    expect(await idem.once(request('k1', { a: 1 }, DAY), answering({ document_id: 'd3' }, runs))).toEqual({
      ran: { document_id: 'd3' },
    });
  });

  it('idempotency: a failed run frees the key, so a retry after a 402 and a top-up goes through', async () => {
    const idem = new Idempotency(new DatabaseSync(':memory:'));
    await expect(
      idem.once(request('k1'), async () => {
        throw new Error('402');
      }),
    ).rejects.toThrow('402');
    const runs = { count: 0 };
    expect(await idem.once(request('k1'), answering({ document_id: 'd1' }, runs))).toEqual({
      ran: { document_id: 'd1' },
    });
  });

  it('idempotency: another body under the same key, a key still running, and a key over 255 characters are refused', async () => {
    const idem = new Idempotency(new DatabaseSync(':memory:'));
    await idem.once(request('k1'), answering({ document_id: 'd1' }, { count: 0 }));
    await expect(idem.once(request('k1', { a: 2 }), async () => ({ document_id: 'x' }))).rejects.toMatchObject({
      code: 'invalid_request',
    });
    let release = () => {};
    const running = idem.once(
      request('k2'),
      () => new Promise<{ document_id: string }>((r) => (release = () => r({ document_id: 'd2' }))),
    );
    await expect(idem.once(request('k2'), async () => ({ document_id: 'x' }))).rejects.toMatchObject({
      code: 'conflict',
    });
    release();
    await running;
    await expect(idem.once(request('x'.repeat(256)), async () => ({ document_id: 'x' }))).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(idem.once(request(''), async () => ({ document_id: 'x' }))).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('idempotency: without a key, or with keys not honoured (config idempotency_key: false), every request runs', async () => {
    const runs = { count: 0 };
    const honoured = new Idempotency(new DatabaseSync(':memory:'));
    await honoured.once(request(undefined), answering({ document_id: 'd1' }, runs));
    await honoured.once(request(undefined), answering({ document_id: 'd1' }, runs));
    const ignored = new Idempotency(new DatabaseSync(':memory:'), { honoured: false });
    await ignored.once(request('k1'), answering({ document_id: 'd1' }, runs));
    expect(await ignored.once(request('k1'), answering({ document_id: 'd2' }, runs))).toEqual({
      ran: { document_id: 'd2' },
    });
    expect(runs.count).toBe(4);
  });

  it('idempotency: a key left running by a stopped server is free after a restart', async () => {
    const db = new DatabaseSync(':memory:');
    void new Idempotency(db).once(request('k1'), () => new Promise(() => {}));
    const runs = { count: 0 };
    await new Idempotency(db).once(request('k1'), answering({ document_id: 'd1' }, runs));
    expect(runs.count).toBe(1);
  });
});

describe('finished bodies', () => {
  const body = (id: string, status: DocumentBody['status'] = 'completed'): DocumentBody => ({
    document_id: id,
    status,
    file_name: 'a.pdf',
    page_count: 1,
    results: null,
    error: null,
  });

  it('finished bodies: a processing document is never kept; a finished one is, for its parser only', () => {
    const kept = new FinishedBodies();
    let loads = 0;
    const load = (b: DocumentBody) => () => {
      loads++;
      return b;
    };
    expect(kept.read('prs_a', 'd1', load(body('d1', 'processing')))).toEqual({ processing: body('d1', 'processing') });
    expect(kept.get('d1')).toBeUndefined();
    const first = kept.read('prs_a', 'd1', load(body('d1')));
    if (!('encoded' in first)) throw new Error('a completed body is kept encoded');
    expect(JSON.parse(first.encoded)).toEqual(body('d1'));
    expect(loads).toBe(2);
    // Kept: no load.
    expect(kept.read('prs_a', 'd1', load(body('d1', 'error')))).toEqual(first);
    expect(loads).toBe(2);
    // Another parser's read is not answered from the cache: its load runs (the gateway's not found).
    const notFound = () => {
      throw new Error('not found');
    };
    expect(() => kept.read('prs_b', 'd1', notFound)).toThrow('not found');
    expect(kept.get('d1')?.bytes.equals(Buffer.from(first.encoded))).toBe(true);
  });

  it('finished bodies: past the limit the oldest is dropped first', () => {
    const kept = new FinishedBodies(2);
    for (const id of ['d1', 'd2', 'd3']) kept.read('prs_a', id, () => body(id));
    expect([kept.get('d1'), kept.get('d2'), kept.get('d3')].map((k) => k !== undefined)).toEqual([false, true, true]);
  });
});
