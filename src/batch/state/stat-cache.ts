import type { FileStamp, InputFile } from '../discover.ts';
import type { FileFacts } from '../facts.ts';
import { readChecksummed, writeChecksummed } from './checksummed.ts';

/**
 * The stat cache, like git's index: a file's real path with its size, mtime and ctime (in
 * nanoseconds), inode and device, mapped to the sha256 and MIME type read from its content.
 * A rerun whose files all match needs to read none of them; a file whose stat changed in any
 * of these is read and hashed again. Saved beside the JSONL journal as `<journal>.stat-cache`.
 *
 * The one assumption: a file whose content changes gets a new size, mtime or ctime, or a new
 * inode (a tool that writes a new file and renames it over the old one). ctime cannot be set
 * back by `touch -d`, tar or rsync, so restoring an old mtime does not hide a change.
 *
 * Racy entries: a file changed again within its filesystem's timestamp granularity of being
 * hashed keeps the stamp that was recorded. Git (Documentation/technical/racy-git.txt) treats
 * an entry whose mtime is not older than the index file's own mtime as "racily clean" and
 * compares its content. We do not record such an entry at all: a file whose mtime or ctime is
 * within 2 s (FAT's granularity, the coarsest) of the moment we began reading it is hashed
 * again by the next run, so no stamp is trusted that a same-granule change could share.
 */

const VERSION = 1;
/** mtime/ctime at least this much older than the read are trusted (ns). */
const RACY_NS = 2_000_000_000n;

/** [size, mtimeNs, ctimeNs, ino, dev, sha256, mimeType], bigints as decimal strings. */
type Entry = [number, string, string, string, string, string, string];

export type StatCache = {
  /** The content's facts when the file's stamp is the one recorded. */
  get(file: InputFile): FileFacts | undefined;
  /** Records facts read from the file; `readStartedMs` is the wall clock when the read began. */
  set(file: InputFile, facts: FileFacts, readStartedMs: number): void;
  /** Writes the cache if anything was recorded. */
  save(): void;
};

export function statCachePathFor(journal: string): string {
  return `${journal}.stat-cache`;
}

export function openStatCache(path: string): StatCache {
  const entries = loadEntries(path);
  let dirty = false;
  return {
    get(file) {
      const stamp = file.stamp;
      const entry = stamp && entries.get(file.realPath);
      if (!stamp || !entry || !matches(entry, stamp)) return undefined;
      return { sha256: entry[5], mimeType: entry[6] };
    },
    set(file, facts, readStartedMs) {
      const stamp = file.stamp;
      if (!stamp) return;
      const readStartedNs = BigInt(Math.floor(readStartedMs)) * 1_000_000n;
      const changed = stamp.mtimeNs > stamp.ctimeNs ? stamp.mtimeNs : stamp.ctimeNs;
      if (changed > readStartedNs - RACY_NS) {
        // Racy: forget any older entry, so that the next run reads the file.
        dirty = entries.delete(file.realPath) || dirty;
        return;
      }
      entries.set(file.realPath, [
        stamp.size,
        String(stamp.mtimeNs),
        String(stamp.ctimeNs),
        String(stamp.ino),
        String(stamp.dev),
        facts.sha256,
        facts.mimeType,
      ]);
      dirty = true;
    },
    save() {
      if (!dirty) return;
      writeChecksummed(path, { v: VERSION, entries: [...entries] });
      dirty = false;
    },
  };
}

function matches(entry: Entry, stamp: FileStamp): boolean {
  return (
    entry[0] === stamp.size &&
    entry[1] === String(stamp.mtimeNs) &&
    entry[2] === String(stamp.ctimeNs) &&
    entry[3] === String(stamp.ino) &&
    entry[4] === String(stamp.dev)
  );
}

function loadEntries(path: string): Map<string, Entry> {
  const body = readChecksummed(path);
  if (typeof body !== 'object' || body === null) return new Map();
  const { v, entries } = body as { v?: unknown; entries?: unknown };
  if (v !== VERSION || !Array.isArray(entries)) return new Map();
  const map = new Map<string, Entry>();
  for (const item of entries as unknown[]) if (isItem(item)) map.set(item[0], item[1]);
  return map;
}

function isItem(item: unknown): item is [string, Entry] {
  if (!Array.isArray(item) || typeof item[0] !== 'string' || !Array.isArray(item[1])) return false;
  const e = item[1] as unknown[];
  return e.length === 7 && typeof e[0] === 'number' && e.slice(1).every((x) => typeof x === 'string');
}
