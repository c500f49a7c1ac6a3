import { statSync } from 'node:fs';
import type { InputFile } from './discover.ts';
import type { FsPath } from './paths.ts';

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

export type Unsettled = { file: string; changed_ms_ago: number };

/** What a file's stat says of its last change (injected in tests). */
export type ChangeStat = (path: FsPath) => { mtimeMs: number; ctimeMs: number };

export function settledOnly(
  files: InputFile[],
  settleMs: number,
  now: number,
  statOf: ChangeStat = statSync,
): { files: InputFile[]; unsettled: Unsettled[] } {
  if (settleMs <= 0) return { files, unsettled: [] };
  const settled: InputFile[] = [];
  const unsettled: Unsettled[] = [];
  for (const input of files) {
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
