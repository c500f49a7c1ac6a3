/**
 * Group commit for an append-only log: lines appended while a write + fdatasync is under way
 * wait for it to end, then go to disk together in one write and one fdatasync. Each append
 * resolves only once the fdatasync that covers its line has returned, so a caller that awaits
 * it (the pipeline, before POST extract) knows the line is durable; concurrent documents share
 * the cost instead of queueing one sync each (2 per document, chained: a latency wall at -c 8).
 * A flush starts at the end of the event loop's turn in which its first line was appended
 * (setImmediate), so the documents whose answers arrived in the same turn share it too; a lone
 * append waits for nothing else.
 */

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

type Waiter = { resolve: () => void; reject: (err: unknown) => void };

export function groupCommit(sink: LogSink, prefix = ''): GroupLog {
  // Lines waiting for the next flush and whose appends resolve with it.
  let pending: string[] = prefix === '' ? [] : [prefix];
  let waiters: Waiter[] = [];
  let flushing: Promise<void> | undefined;
  // A failed write leaves the file in an unknown state: later appends fail too, not silently succeed.
  let broken: unknown;

  const flush = async (): Promise<void> => {
    while (pending.length > 0) {
      const lines = pending;
      const batch = waiters;
      pending = [];
      waiters = [];
      try {
        if (broken !== undefined) throw broken;
        await sink.write(lines.join(''));
        await sink.datasync();
      } catch (err) {
        broken ??= err;
        for (const w of batch) w.reject(err);
        continue;
      }
      for (const w of batch) w.resolve();
    }
    flushing = undefined;
  };

  return {
    append(line) {
      return new Promise<void>((resolve, reject) => {
        pending.push(line);
        waiters.push({ resolve, reject });
        flushing ??= new Promise<void>((started) => setImmediate(started)).then(flush);
      });
    },
    async close() {
      if (pending.length > 0) flushing ??= flush();
      await flushing;
      await sink.close();
    },
  };
}
