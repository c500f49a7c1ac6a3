import { statSync } from 'node:fs';
import type { InputFile } from '../discover.ts';
import type { FsPath } from '../paths.ts';
import type { Unsettled } from '../summary.ts';

/**
 * --settle: a file changed within the last `settleMs` may still be being written (a scanner, a
 * copy over the network, a mail rule): sent now, a half-written PDF fails (and a real service may
 * charge the pages it could read). A batch run leaves it for the next run, and says so; `extract
 * watch` waits for it with the same flag and meaning: size and times unchanged for that long.
 *
 * A single run cannot watch a size change, so "unchanged" is read from the clock: the newer of
 * mtime and ctime. ctime too, because a copy that keeps the original's mtime (cp -p, rsync -t,
 * an unzip) still moves ctime with every write, and ctime cannot be set back.
 */

/**
 * The names browsers and copiers write a file under until it is whole, then rename: Firefox and
 * wget's `.part`, Chrome's `.crdownload`, a copier's `.tmp` or `.partial`, an editor's `~` copy.
 * The file under its final name is the document; this one may be cut short at any byte.
 */
const PARTIAL_SUFFIXES = ['.part', '.crdownload', '.tmp', '.partial', '~'];

function isPartialDownload(file: string): boolean {
  const name = file.toLowerCase();
  return PARTIAL_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/** What a file's stat says of its last change (injected in tests). */
export type ChangeStat = (path: FsPath) => { mtimeMs: number; ctimeMs: number };

export function settledOnly(
  files: InputFile[],
  settleMs: number,
  now: number,
  statOf: ChangeStat = statSync,
): { files: InputFile[]; unsettled: Unsettled[] } {
  const settled: InputFile[] = [];
  const unsettled: Unsettled[] = [];
  for (const input of files) {
    // Found in a folder or by a pattern only: a file named by itself is sent, as always.
    if (!input.explicit && isPartialDownload(input.file)) {
      const partial = partialOf(input, now, statOf);
      if (partial !== undefined) unsettled.push(partial);
      continue;
    }
    if (settleMs <= 0) {
      settled.push(input);
      continue;
    }
    let changed: number;
    try {
      const s = statOf(input.path);
      changed = Math.max(s.mtimeMs, s.ctimeMs);
    } catch {
      // Gone or unreadable since the walk: the plan step reports it as it reports any such file.
      settled.push(input);
      continue;
    }
    const ago = now - changed;
    // A time further ahead than the window is another machine's clock (a share), not a write under way.
    if (ago < settleMs && ago > -settleMs)
      unsettled.push({ file: input.file, changed_ms_ago: Math.max(0, Math.round(ago)) });
    else settled.push(input);
  }
  return { files: settled, unsettled };
}

/** A partial download, left; none when it is gone since the walk (renamed to its final name: another file). */
function partialOf(input: InputFile, now: number, statOf: ChangeStat): Unsettled | undefined {
  try {
    const s = statOf(input.path);
    const ago = Math.max(0, Math.round(now - Math.max(s.mtimeMs, s.ctimeMs)));
    return { file: input.file, changed_ms_ago: ago, reason: 'partial download' };
  } catch {
    return undefined;
  }
}
