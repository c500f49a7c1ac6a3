import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { Inbox } from '../../src/receiver/inbox.ts';
import { tempDir } from '../helpers/cli.ts';
import { it, payload, send } from '../receiver/helpers.ts';

/**
 * `extract listen` never blocks its inbox: a payload nested 2,000 deep is refused
 * (400) before anything recurses into it; one already acknowledged (by an older version) is
 * quarantined and the next events are written; any RFC 3339 timestamp is taken; an
 * integration's test event is acknowledged but never written as a document.
 */

const idsIn = (path: string): string[] =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as { document_id: string }).document_id)
    : [];

/** `data` with one field nested `depth` arrays deep, as raw JSON text (about 2 bytes per level). */
const deepBody = (documentId: string, depth: number) =>
  JSON.stringify(payload({ document_id: documentId, data: { invoice_number: 'INV-1' } })).replace(
    '"INV-1"',
    `${'['.repeat(depth)}1${']'.repeat(depth)}`,
  );

describe('hostile: extract listen', () => {
  it('a payload nested 2,000 deep is a 400, and the next event is written', async ({ receiver }) => {
    const dir = tempDir();
    const out = join(dir, 'records.jsonl');
    const r = await receiver({ out });
    const deep = await send(r.url, undefined, { raw: deepBody('doc_deep', 2000) });
    expect(deep.status).toBe(400);
    expect(JSON.stringify(deep.body)).toContain('nested deeper than 32 levels');
    expect((await send(r.url, payload({ document_id: 'doc_after' }))).status).toBe(200);
    await r.drained();
    expect(idsIn(out)).toEqual(['doc_after']);
  });

  it('an event acknowledged before the limit existed is quarantined, and the inbox moves on across a restart', async ({
    receiver,
  }) => {
    const dir = tempDir();
    const out = join(dir, 'records.jsonl');
    const dataDir = join(dir, 'inbox');
    // What an older version acknowledged: the deep event first in the inbox.
    const old = Inbox.open(dataDir);
    old.append({
      receivedAt: new Date(),
      method: 'POST',
      documentId: 'doc_deep',
      body: Buffer.from(deepBody('doc_deep', 2000)),
    });
    old.close();
    const r = await receiver({ out, dataDir });
    expect((await send(r.url, payload({ document_id: 'doc_next' }))).status).toBe(200);
    await r.drained();
    expect(idsIn(out)).toEqual(['doc_next']);
    expect(
      r.lines.some((l) =>
        /inbox event #1 cannot be written \(nested deeper than 32 levels\); it is quarantined/.test(l),
      ),
    ).toBe(true);
    await r.close();
    // Restarted: nothing is retried forever; a new event is written at once.
    const again = await receiver({ out, dataDir });
    expect((await send(again.url, payload({ document_id: 'doc_later' }))).status).toBe(200);
    await again.drained();
    expect(idsIn(out)).toEqual(['doc_next', 'doc_later']);
  });

  it('takes any RFC 3339 timestamp: +00:00, other offsets, no milliseconds, microseconds', async ({ receiver }) => {
    const dir = tempDir();
    const out = join(dir, 'records.jsonl');
    const r = await receiver({ out });
    const stamps = [
      '2024-03-15T10:20:30.000+00:00',
      '2024-03-15T10:20:30Z',
      '2024-03-15T12:20:30+02:00',
      '2024-03-15T10:20:30.123456Z',
    ];
    for (const [i, timestamp] of stamps.entries())
      expect((await send(r.url, payload({ document_id: `doc_t${i}`, timestamp }))).status).toBe(200);
    // Not a date-time: acknowledged (the deployed sender never retries a 4xx), kept, not written.
    for (const timestamp of ['2024-03-15', '2024-13-45T99:00:00Z', 'yesterday'])
      expect((await send(r.url, payload({ document_id: 'doc_bad', timestamp }))).status).toBe(200);
    await r.drained();
    expect(idsIn(out)).toEqual(['doc_t0', 'doc_t1', 'doc_t2', 'doc_t3']);
    expect(r.lines.filter((l) => /^<-- doc_bad kept, not written: .* at timestamp/.test(l))).toHaveLength(3);
  });

  it("an integration's test event is acknowledged and logged as a test, never written as a document", async ({
    receiver,
  }) => {
    const dir = tempDir();
    const out = join(dir, 'records.jsonl');
    const r = await receiver({ out });
    const test = await send(r.url, { ...payload({ document_id: 'doc_test_1' }), test: true });
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ received: true, test: true });
    expect((await send(r.url, payload({ document_id: 'doc_real' }))).status).toBe(200);
    await r.drained();
    expect(idsIn(out)).toEqual(['doc_real']);
    expect(r.lines).toContain("<-- test event doc_test_1 (an integration's test action: acknowledged, not written)");
  });
});
