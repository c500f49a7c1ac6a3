import { stampChangedMs, type InputFile } from './discover.ts';
import type { FileFacts } from './facts.ts';
import { readChecksummed, writeChecksummedChunks } from '../journal/state/checksummed.ts';

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
};

export function statCachePathFor(journal: string): string {
  return `${journal}.stat-cache`;
}

/** A file's recorded facts: the stamp they were read at, its sha256 and MIME type. */
type Entry = [stamp: string, sha256: string, mimeType: string];

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
  // Files (re)read by this run; undefined: forgotten (racy).
  const changes = new Map<string, Entry | undefined>();
  // The order this run looked files up in, which the saved file keeps.
  const looked: string[] = [];
  let dirty = false;
  const loaded = (at: number): Entry => {
    const shaAt = text.indexOf('\0', at) + 1;
    const typeAt = text.indexOf('\0', shaAt) + 1;
    return [text.slice(at, shaAt - 1), text.slice(shaAt, typeAt - 1), text.slice(typeAt, text.indexOf('\0', typeAt))];
  };
  const entry = (realPath: string): Entry | undefined => {
    if (changes.has(realPath)) return changes.get(realPath);
    const at = find(realPath);
    return at < 0 ? undefined : loaded(at);
  };
  return {
    get(file) {
      looked.push(file.realPath);
      const stamp = file.stamp;
      if (!stamp) return undefined;
      if (changes.size > 0 && changes.has(file.realPath)) {
        const e = changes.get(file.realPath);
        return e && e[0] === stamp ? { sha256: e[1], mimeType: e[2] } : undefined;
      }
      const at = find(file.realPath);
      if (at < 0) return undefined;
      cursor = skipFields(text, at, 3);
      if (!(text.startsWith(stamp, at) && text.charCodeAt(at + stamp.length) === NUL)) return undefined;
      const shaAt = at + stamp.length + 1;
      const typeAt = text.indexOf('\0', shaAt) + 1;
      return { sha256: text.slice(shaAt, typeAt - 1), mimeType: text.slice(typeAt, cursor - 1) };
    },
    set(file, facts, readStartedMs) {
      const stamp = file.stamp;
      if (!stamp) return;
      // Racy: forget any older entry, so that the next run reads the file.
      if (stampChangedMs(stamp) > readStartedMs - RACY_MS) {
        if (entry(file.realPath) !== undefined) {
          changes.set(file.realPath, undefined);
          dirty = true;
        }
        return;
      }
      changes.set(file.realPath, [stamp, facts.sha256, facts.mimeType]);
      dirty = true;
    },
    save() {
      if (!dirty) return;
      // This run's files in its order, then the other files the cache knew, then (unlikely) new ones not looked up.
      const paths = new Set([...looked, ...indexed().keys(), ...changes.keys()]);
      // Written a block at a time, never as one text (at 100,000 files, that text three times over was a first run's peak).
      writeChecksummedChunks(path, function* () {
        yield `${VERSION}\n`;
        for (const realPath of paths) {
          const e = entry(realPath);
          if (e) yield `${realPath}\0${e[0]}\0${e[1]}\0${e[2]}\0`;
        }
      });
      dirty = false;
    },
  };
}

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
