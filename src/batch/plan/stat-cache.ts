import { stampChangedMs, type InputFile } from '../discover.ts';
import type { FileFacts } from '../facts.ts';
import { readChecksummed, writeChecksummedChunks } from '../../journal/state/checksummed.ts';
import { Int32List } from '../int32-list.ts';
import { LineSpool } from '../spool.ts';

/**
 * The stat cache, like git's index: a file's real path with its size, mtime and ctime (Node's
 * milliseconds, to a quarter of a microsecond), inode and device, mapped to the sha256 and MIME type read from its content.
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

/**
 * The file, after its checksum line: a version line, then four NUL-separated fields per file
 * (real path, stamp, sha256, MIME type), every field ended by a NUL. No other separator is safe
 * (a Linux file name may hold a newline or a tab, never a NUL).
 *
 * Entries are saved in the order the run looked the files up, which is discovery's order, so
 * the next run finds each file's entry where the previous one ended: a cursor walks the text
 * and compares the path and stamp in place, making no string or object for a file that
 * matches but its sha256 and type. A lookup out of that order (other inputs, new files) goes
 * through a map of the whole text, built at the first such lookup.
 */
const VERSION = 'extract-stat-cache 3';
/** mtime/ctime at least this much older than the read are trusted (ms). */
const RACY_MS = 2_000;
const NUL = 0;

export type StatCache = {
  /** The content's facts when the file's stamp is the one recorded. */
  get(file: InputFile): FileFacts | undefined;
  /** Records facts read from the file; `readStartedMs` is the wall clock when the read began. */
  set(file: InputFile, facts: FileFacts, readStartedMs: number): void;
  /** Writes the cache if anything was recorded. */
  save(): void;
  /** Lets go of the new entries kept for save(). */
  close(): void;
};

export function statCachePathFor(journal: string): string {
  return `${journal}.stat-cache`;
}

export function openStatCache(path: string): StatCache {
  const text = loadEntries(path);
  // Where the next lookup is expected: the start of an entry.
  let cursor = 0;
  // Path -> start of its entry's stamp; built at the first lookup out of order.
  let index: Map<string, number> | undefined;
  const indexed = (): Map<string, number> => {
    if (index !== undefined) return index;
    index = new Map();
    for (let at = 0; at < text.length; ) {
      const end = text.indexOf('\0', at);
      index.set(text.slice(at, end), end + 1);
      at = skipFields(text, end + 1, 3);
    }
    return index;
  };
  /** The loaded entry of `realPath`: where its stamp starts, or -1. */
  const find = (realPath: string): number => {
    if (text.startsWith(realPath, cursor) && text.charCodeAt(cursor + realPath.length) === NUL) {
      return cursor + realPath.length + 1;
    }
    return indexed().get(realPath) ?? -1;
  };
  // What the saved file will hold, in the order this run looked files up: for each lookup, the
  // loaded entry it found (its start, or -1) and what replaces it: a new entry's slot in `fresh`
  // (>= 0), FORGOTTEN (racy), or KEEP. Two numbers a file, where a map of this run's entries held
  // each path, stamp and hash to the end of the plan (at 100,000 new files, its largest part).
  const found = new Int32List();
  const replaced = new Int32List();
  // New entries' text, on disk (a spool) or, where none can be made, in memory.
  const fresh = LineSpool.open();
  const freshInMemory: string[] = [];
  let freshCount = 0;
  // Lookups a read may follow (the cache did not know the file): path -> its place in `found`.
  // A read follows its lookup within the plan's window, so this stays small.
  const pending = new Map<string, number>();
  let dirty = false;
  const entryAt = (realPath: string, at: number): number => (at < 0 ? -1 : at - realPath.length - 1);
  const keepFresh = (text: string): number => {
    const slot = freshCount++;
    if (fresh === undefined) freshInMemory.push(text);
    else fresh.put(slot, text);
    return slot;
  };
  const freshText = (slot: number): string => (fresh === undefined ? freshInMemory[slot] : fresh.get(slot)) ?? '';
  return {
    get(file) {
      const at = find(file.realPath);
      const place = found.length;
      found.push(entryAt(file.realPath, at));
      replaced.push(KEEP);
      const stamp = file.stamp;
      if (at >= 0) cursor = skipFields(text, at, 3);
      if (stamp && at >= 0 && text.startsWith(stamp, at) && text.charCodeAt(at + stamp.length) === NUL) {
        const shaAt = at + stamp.length + 1;
        const typeAt = text.indexOf('\0', shaAt) + 1;
        return { sha256: text.slice(shaAt, typeAt - 1), mimeType: text.slice(typeAt, cursor - 1) };
      }
      if (stamp) pending.set(file.realPath, place);
      return undefined;
    },
    set(file, facts, readStartedMs) {
      const stamp = file.stamp;
      if (!stamp) return;
      let place = pending.get(file.realPath);
      pending.delete(file.realPath);
      if (place === undefined) {
        // Recorded without a lookup first: after this run's files.
        place = found.length;
        found.push(entryAt(file.realPath, find(file.realPath)));
        replaced.push(KEEP);
      }
      // Racy: forget any older entry, so that the next run reads the file.
      if (stampChangedMs(stamp) > readStartedMs - RACY_MS) {
        if (found.at(place) >= 0) {
          replaced.set(place, FORGOTTEN);
          dirty = true;
        }
        return;
      }
      replaced.set(place, keepFresh(`${file.realPath}\0${stamp}\0${facts.sha256}\0${facts.mimeType}\0`));
      dirty = true;
    },
    save() {
      if (!dirty) return;
      // This run's files in its order, then the other files the cache knew (each entry once).
      // Written a block at a time, never as one text (at 100,000 files, that text three times over was a first run's peak).
      writeChecksummedChunks(path, function* () {
        const looked = new Set<number>();
        for (let i = 0; i < found.length; i++) if (found.at(i) >= 0) looked.add(found.at(i));
        const copied = new Set<number>();
        yield `${VERSION}\n`;
        for (let i = 0; i < found.length; i++) {
          const slot = replaced.at(i);
          const at = found.at(i);
          if (slot >= 0) yield freshText(slot);
          else if (slot === KEEP && at >= 0 && !copied.has(at)) {
            copied.add(at);
            yield text.slice(at, skipFields(text, at, 4));
          }
        }
        for (let at = 0; at < text.length; at = skipFields(text, at, 4))
          if (!looked.has(at)) yield text.slice(at, skipFields(text, at, 4));
      });
      dirty = false;
    },
    close() {
      fresh?.close();
    },
  };
}

const KEEP = -1;
const FORGOTTEN = -2;

/** The position after `count` NUL-ended fields from `at`. */
function skipFields(text: string, at: number, count: number): number {
  let pos = at;
  for (let i = 0; i < count; i++) pos = text.indexOf('\0', pos) + 1;
  return pos;
}

/** The entries' text (after the version line), or '' when the file is missing, damaged or of another version. */
function loadEntries(path: string): string {
  const body = readChecksummed(path);
  if (body === undefined) return '';
  const newline = body.indexOf('\n');
  if (newline < 0 || body.slice(0, newline) !== VERSION || !(body.length === newline + 1 || body.endsWith('\0')))
    return '';
  const text = body.slice(newline + 1);
  // Four fields per entry: a text that is not whole is not used.
  let fields = 0;
  for (let at = text.indexOf('\0'); at >= 0; at = text.indexOf('\0', at + 1)) fields++;
  return fields % 4 === 0 ? text : '';
}
