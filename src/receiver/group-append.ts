import type { Inbox, InboxEvent } from './inbox.ts';

/**
 * Group commit for the inbox's appends (as src/journal/state/group-commit.ts does for the
 * journal): events whose bodies were read in the same turn of the event loop are appended in
 * one transaction, so a burst of N senders waits for one disk sync, not N queued one after the
 * other. Each append resolves with its inbox_seq only once the commit that holds it has
 * returned (synchronous=FULL: on disk), so the 200 still leaves after the event is durable.
 */
export type GroupAppend = (event: InboxEvent) => Promise<number>;

type Waiting = { event: InboxEvent; resolve: (seq: number) => void; reject: (err: unknown) => void };

export function groupAppend(inbox: Pick<Inbox, 'appendMany'>): GroupAppend {
  let pending: Waiting[] = [];
  let scheduled = false;

  const flush = (): void => {
    scheduled = false;
    const batch = pending;
    pending = [];
    let seqs: number[];
    try {
      seqs = inbox.appendMany(batch.map((w) => w.event));
    } catch (err) {
      // Nothing of the batch was committed: each sender gets a 5xx and sends again.
      for (const w of batch) w.reject(err);
      return;
    }
    for (const [i, w] of batch.entries()) w.resolve(seqs[i]!);
  };

  return (event) =>
    new Promise<number>((resolve, reject) => {
      pending.push({ event, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
