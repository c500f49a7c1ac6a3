/**
 * The settle rule of `extract watch`: a file is sent once its size and mtime have not changed
 * for `settleMs`, as seen by two looks at least that far apart. A scanner or a copy that
 * writes a file in chunks keeps changing both, so a half-written file waits; a file already
 * sent with the same size and mtime (an event that only touched it, a rescan) is not sent
 * again. Pure: the caller stats the files and hands in the clock.
 */

/** What the rule compares of a file: its size and mtime, as stat gives them. */
export type FileStamp = { size: number; mtimeMs: number };

export type Settler = {
  /** A look at `path` (an event, a rescan, a re-stat of a waiting file) found this stamp. */
  seen(path: string, stamp: FileStamp): void;
  /** The file is gone (or cannot be read): nothing waits for it. */
  gone(path: string): void;
  /** Files waiting to settle: the caller looks at them again (stat, then `seen`). */
  waiting(): string[];
  /** Files stable for settleMs at the last look, in the order they first changed; they stop waiting. */
  settled(): Array<{ path: string; stamp: FileStamp }>;
  /** The file was handled at this stamp: a later look that finds the same stamp does nothing. */
  handled(path: string, stamp: FileStamp): void;
  /** The file's record is not final (still processing, not submitted): the next look sees it anew. */
  forget(path: string): void;
  /** A full listing found these files: the others are gone. */
  keepOnly(present: ReadonlySet<string>): void;
};

type Waiting = { stamp: FileStamp; since: number; last: number };

export function createSettler(settleMs: number, now: () => number): Settler {
  const waiting = new Map<string, Waiting>();
  const done = new Map<string, FileStamp>();
  return {
    seen(path, stamp) {
      const at = now();
      const handledAt = done.get(path);
      if (handledAt !== undefined && sameStamp(handledAt, stamp)) {
        waiting.delete(path);
        return;
      }
      const w = waiting.get(path);
      if (w !== undefined && sameStamp(w.stamp, stamp)) w.last = at;
      // A new file, or one that changed since the last look: its quiet time starts again.
      else waiting.set(path, { stamp, since: at, last: at });
    },
    gone(path) {
      waiting.delete(path);
      done.delete(path);
    },
    waiting: () => [...waiting.keys()],
    settled() {
      const out: Array<{ path: string; stamp: FileStamp }> = [];
      for (const [path, w] of waiting) {
        // Unchanged at a look settleMs after the change: one look alone proves nothing.
        if (w.last - w.since >= settleMs) out.push({ path, stamp: w.stamp });
      }
      for (const { path } of out) waiting.delete(path);
      return out;
    },
    handled(path, stamp) {
      done.set(path, stamp);
    },
    forget(path) {
      done.delete(path);
    },
    keepOnly(present) {
      for (const path of [...waiting.keys()]) if (!present.has(path)) waiting.delete(path);
      for (const path of [...done.keys()]) if (!present.has(path)) done.delete(path);
    },
  };
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs;
}
