import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { Inbox } from '../../src/receiver/inbox.ts';
import { tempDir } from '../helpers/cli.ts';
import { it, payload, send } from './helpers.ts';

const jsonl = async (path: string): Promise<{ document_id: string }[]> =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

describe('listen: deduplication', () => {
  it('listen: a repeated document_id is a no-op, counted and logged as a duplicate', async ({ receiver }) => {
    const dir = tempDir();
    const out = join(dir, 'records.jsonl');
    const r = await receiver({ out });
    for (const id of ['doc_a', 'doc_b', 'doc_a', 'doc_a'])
      expect((await send(r.url, payload({ document_id: id }))).status).toBe(200);
    await r.drained();
    expect(r.lines).toEqual([
      '<-- doc_a parser=Invoices pages=2 new',
      '<-- doc_b parser=Invoices pages=2 new',
      '<-- doc_a parser=Invoices pages=2 duplicate',
      '<-- doc_a parser=Invoices pages=2 duplicate',
    ]);
    expect(r.stats()).toEqual({ received: 4, duplicates: 2, kept: 0, tests: 0, rejected: 0, unauthorized: 0 });
    expect((await jsonl(out)).map((x) => x.document_id)).toEqual(['doc_a', 'doc_b']);
    await r.close();
    expect(r.lines.at(-1)).toBe('received 4 (2 new, 2 duplicate), rejected 0, unauthorized 0');
  });

  it('listen: a repeated document_id is a no-op across a restart on the same data dir', async ({ receiver }) => {
    const dir = tempDir();
    const out = join(dir, 'records.jsonl');
    const dataDir = join(dir, 'inbox');
    const first = await receiver({ out, dataDir });
    await send(first.url, payload({ document_id: 'doc_a', data: { total: 1 } }));
    await first.drained();
    await first.close();

    const second = await receiver({ out, dataDir });
    // The same document again, even with other content: still the first one's no-op.
    await send(second.url, payload({ document_id: 'doc_a', data: { total: 2 } }), { method: 'PUT' });
    await send(second.url, payload({ document_id: 'doc_b' }));
    await second.drained();
    expect(second.lines).toEqual([
      '<-- doc_a parser=Invoices pages=2 duplicate with other data than the first (kept in the inbox as #2, not written)',
      '<-- doc_b parser=Invoices pages=2 new',
    ]);
    const records = await jsonl(out);
    expect(records.map((x) => x.document_id)).toEqual(['doc_a', 'doc_b']);
    expect(records[0]).toMatchObject({ results: { total: 1 } });
  });

  it('listen: repeats of a large event that record the same keep a row each, not a body each; one with other data keeps its body', async ({
    receiver,
  }) => {
    const dir = tempDir();
    const dataDir = join(dir, 'inbox');
    const r = await receiver({ out: join(dir, 'records.jsonl'), dataDir });
    const big = payload({ document_id: 'doc_big', data: { notes: 'x'.repeat(1_000_000) } });
    for (let i = 0; i < 20; i++) expect((await send(r.url, big)).status).toBe(200);
    expect((await send(r.url, payload({ document_id: 'doc_big', data: { notes: 'y' } }))).status).toBe(200);
    await r.drained();
    await r.close();
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(join(dataDir, 'inbox.db'), { readOnly: true });
    const rows = db.prepare('SELECT count(*) AS n, sum(length(body)) AS bytes FROM inbox').get();
    const kept = db.prepare('SELECT count(*) AS n FROM inbox WHERE length(body) > 0').get();
    db.close();
    expect(Number(rows?.n)).toBe(21);
    // The first event's body and the one that says otherwise: about one large body, not twenty.
    expect(Number(kept?.n)).toBe(2);
    expect(Number(rows?.bytes)).toBeLessThan(1_200_000);
  });

  it('listen: on start, events a previous run acknowledged but did not process are processed', async ({ receiver }) => {
    const dataDir = tempDir();
    const out = join(tempDir(), 'records.jsonl');
    // What a run killed right after its 200s leaves behind: inbox rows, never processed.
    const inbox = Inbox.open(dataDir);
    for (const id of ['doc_x', 'doc_y', 'doc_x']) {
      inbox.append({
        receivedAt: new Date(),
        method: 'POST',
        documentId: id,
        body: Buffer.from(JSON.stringify(payload({ document_id: id }))),
      });
    }
    inbox.close();

    const r = await receiver({ out, dataDir });
    await r.drained();
    expect(r.lines).toEqual([
      '<-- doc_x parser=Invoices pages=2 new',
      '<-- doc_y parser=Invoices pages=2 new',
      '<-- doc_x parser=Invoices pages=2 duplicate',
    ]);
    expect((await jsonl(out)).map((x) => x.document_id)).toEqual(['doc_x', 'doc_y']);
  });

  it('listen: a second listener on the same data dir is refused: another run holds it (exit 9)', async ({
    receiver,
  }) => {
    const r = await receiver();
    await expect(receiver({ dataDir: r.dataDir })).rejects.toMatchObject({
      code: 'locked',
      message: expect.stringMatching(/in use by another extract listen: stop it, or pass another --data-dir/),
    });
  });

  it('listen: a burst of events is deduplicated exactly, whatever the batching', async ({ receiver }) => {
    const r = await receiver({ out: join(tempDir(), 'r.jsonl') });
    const ids = Array.from({ length: 200 }, (_, i) => `doc_${i % 50}`);
    const answers = await Promise.all(ids.map((id) => send(r.url, payload({ document_id: id }))));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await r.drained();
    expect(r.stats()).toMatchObject({ received: 200, duplicates: 150 });
    expect(r.lines.filter((l) => l.endsWith(' new'))).toHaveLength(50);
  });

  it('listen: document_ids that are not UTF-8 stay distinct (each unreadable byte escaped as \\xHH), not one and a duplicate', async ({
    receiver,
  }) => {
    const dir = tempDir();
    const out = join(dir, 'records.jsonl');
    const r = await receiver({ out });
    // The same event with one byte of its document_id changed: 0xFF, 0xFE, then 0xFF again.
    const bodyWith = (byte: number): Buffer => {
      const [head, tail] = JSON.stringify(payload({ document_id: 'inv-@' })).split('@') as [string, string];
      return Buffer.concat([Buffer.from(head), Buffer.from([byte]), Buffer.from(tail)]);
    };
    const acks = [];
    for (const byte of [0xff, 0xfe, 0xff]) acks.push(await send(r.url, null, { raw: bodyWith(byte) }));
    expect(acks.map((a) => [a.status, (a.body as { document_id: string }).document_id])).toEqual([
      [200, 'inv-\\xFF'],
      [200, 'inv-\\xFE'],
      [200, 'inv-\\xFF'],
    ]);
    await r.drained();
    expect(r.stats()).toMatchObject({ received: 3, duplicates: 1 });
    expect((await jsonl(out)).map((x) => x.document_id)).toEqual(['inv-\\xFF', 'inv-\\xFE']);
  });
});
