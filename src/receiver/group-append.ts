import { commitGroups } from '../journal/state/group-commit.ts';
import type { Inbox, InboxEvent } from './inbox.ts';

/**
 * Group commit for the inbox's appends (src/journal/state/group-commit.ts, as for the journal):
 * events whose bodies were read in the same turn of the event loop are appended in one
 * transaction, so a burst of N senders waits for one disk sync, not N queued one after the
 * other. Each append resolves with its inbox_seq only once the commit that holds it has
 * returned (synchronous=FULL: on disk), so the 200 still leaves after the event is durable; a
 * failed commit committed nothing of its group, and each sender gets a 5xx and sends again.
 */
export type GroupAppend = (event: InboxEvent) => Promise<number>;

export function groupAppend(inbox: Pick<Inbox, 'appendMany'>): GroupAppend {
  const events = commitGroups<InboxEvent, number>((group) => inbox.appendMany(group));
  return (event) => events.add(event);
}
