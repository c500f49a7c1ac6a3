import { describe, expect, it } from 'vitest';
import { Inbox } from '../../src/receiver/inbox.ts';
import { groupAppend } from '../../src/receiver/group-append.ts';
import { tempDir } from '../helpers/cli.ts';

describe('groupAppend: the inbox appends of one event-loop turn share one commit', () => {
  it('20 appends at once: one transaction, each resolves with its own seq, all durable in order', async () => {
    const inbox = Inbox.open(tempDir());
    let commits = 0;
    const counted = {
      appendMany: (events: Parameters<typeof inbox.appendMany>[0]) => {
        commits++;
        return inbox.appendMany(events);
      },
    };
    const append = groupAppend(counted);
    const body = (n: number) => new TextEncoder().encode(`{"n":${n}}`);
    const seqs = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        append({ receivedAt: new Date(0), method: 'POST', documentId: `doc_${n}`, body: body(n) }),
      ),
    );
    expect(commits).toBe(1);
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, n) => seqs[0]! + n));
    const rows = inbox.unprocessed(1_000_000);
    expect(rows.map((r) => new TextDecoder().decode(r.body))).toEqual(
      Array.from({ length: 20 }, (_, n) => `{"n":${n}}`),
    );
    // A later turn is a commit of its own.
    await append({ receivedAt: new Date(0), method: 'PUT', documentId: 'doc_late', body: body(99) });
    expect(commits).toBe(2);
    inbox.close();
  });

  it('a failed commit rejects every append of its batch and none is kept', async () => {
    const dir = tempDir();
    const inbox = Inbox.open(dir);
    inbox.close();
    const append = groupAppend(inbox);
    const results = await Promise.allSettled(
      [1, 2].map((n) =>
        append({ receivedAt: new Date(0), method: 'POST', documentId: `d${n}`, body: new Uint8Array([123, 125]) }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
