/**
 * Group commit: what is added while a commit (a write and its sync, a transaction) is under way
 * waits for it to end, then goes to disk with the others in one commit. Each add resolves only
 * once the commit that holds it has returned, so a caller that awaits it (the pipeline, before
 * POST extract; the receiver, before its 200) knows it is durable; concurrent documents share
 * the cost instead of queueing one sync each (2 per document, chained: a latency wall at -c 8).
 * A commit starts at the end of the event loop's turn in which its first item was added
 * (setImmediate), so the documents whose answers arrived in the same turn share it too; a lone
 * add waits for nothing else. The JSONL journal (below), the SQLite journal and the receiver's
 * inbox commit their groups through here.
 */

/** One item of a group refused on its own (a lost claim): the others of its group are committed. */
export class Refused {
  readonly error: unknown;
  constructor(error: unknown) {
    this.error = error;
  }
}

/** Commits a group whole, answering each item in order (or throws: none of the group was committed). */
export type CommitGroup<T, R> = (items: T[]) => Promise<Array<R | Refused>> | Array<R | Refused>;

export type Grouped<T, R> = {
  /** Resolves with the item's answer once the commit that holds it has returned. */
  add(item: T): Promise<R>;
  /** Commits what was added at once, and waits until nothing is left to commit. */
  settle(): Promise<void>;
};

type Waiter<T, R> = { item: T; resolve: (value: R) => void; reject: (err: unknown) => void };

export function commitGroups<T, R>(commit: CommitGroup<T, R>): Grouped<T, R> {
  let pending: Array<Waiter<T, R>> = [];
  let flushing: Promise<void> | undefined;

  const flush = async (): Promise<void> => {
    while (pending.length > 0) {
      const group = pending;
      pending = [];
      let answers: Array<R | Refused>;
      try {
        answers = await commit(group.map((w) => w.item));
      } catch (err) {
        for (const w of group) w.reject(err);
        continue;
      }
      group.forEach((w, i) => {
        const answer = answers[i] as R | Refused;
        if (answer instanceof Refused) w.reject(answer.error);
        else w.resolve(answer);
      });
    }
    flushing = undefined;
  };

  return {
    add(item) {
      return new Promise<R>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        flushing ??= new Promise<void>((started) => setImmediate(started)).then(flush);
      });
    },
    async settle() {
      if (pending.length > 0) flushing ??= flush();
      while (flushing !== undefined) await flushing;
    },
  };
}

/** Where the lines go: a file handle opened for appending, or a counting stand-in in tests. */
export type LogSink = {
  write(data: string): Promise<unknown>;
  datasync(): Promise<void>;
  close(): Promise<void>;
};

export type GroupLog = {
  /** Resolves when `line` (and every line appended before it) is written and synced. */
  append(line: string): Promise<void>;
  /** Waits for what was appended, then closes the sink. */
  close(): Promise<void>;
};

/** An append-only log over group commit: each group is one write and one fdatasync; `prefix` goes before the first. */
export function groupCommit(sink: LogSink, prefix = ''): GroupLog {
  let first = prefix;
  // A failed write leaves the file in an unknown state: later appends fail too, not silently succeed.
  let broken: unknown;
  const write = async (text: string): Promise<void> => {
    try {
      if (broken !== undefined) throw broken;
      await sink.write(text);
      await sink.datasync();
    } catch (err) {
      broken ??= err;
      throw err;
    }
  };
  const lines = commitGroups<string, void>(async (group) => {
    const text = first + group.join('');
    first = '';
    await write(text);
    return group.map(() => undefined);
  });
  return {
    append: (line) => lines.add(line),
    async close() {
      await lines.settle();
      if (first !== '') {
        const text = first;
        first = '';
        // Nothing was appended: the prefix alone (a torn line ended), as it would have gone with a first line.
        await write(text).catch(() => undefined);
      }
      await sink.close();
    },
  };
}
