import { stampChangedMs, type InputFile } from '../discover.ts';
import type { FileFacts } from '../facts.ts';
import { readChecksummed, writeChecksummed } from './checksummed.ts';

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
 * (a Linux file name may hold a newline or a tab, never a NUL), and reading it is one split:
 * no JSON to parse, no object per file.
 */
const VERSION = 'extract-stat-cache 3';
/** mtime/ctime at least this much older than the read are trusted (ms). */
const RACY_MS = 2_000;
const FIELDS = 4;

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
  // The loaded fields, and where each path's four start: no object per file for a rerun that only reads.
  const fields = loadFields(path);
  const at = new Map<string, number>();
  for (let i = 0; i < fields.length; i += FIELDS) at.set(fields[i]!, i);
  // Files (re)read by this run: [stamp, sha256, mimeType]; undefined: forgotten (racy).
  const changes = new Map<string, [string, string, string] | undefined>();
  let dirty = false;
  const entry = (realPath: string): [string, string, string] | undefined => {
    if (changes.has(realPath)) return changes.get(realPath);
    const i = at.get(realPath);
    return i === undefined ? undefined : [fields[i + 1]!, fields[i + 2]!, fields[i + 3]!];
  };
  return {
    get(file) {
      const stamp = file.stamp;
      if (!stamp) return undefined;
      if (changes.size > 0 && changes.has(file.realPath)) {
        const e = changes.get(file.realPath);
        return e && e[0] === stamp ? { sha256: e[1], mimeType: e[2] } : undefined;
      }
      // The loaded fields as they are: a rerun that only reads makes no array per file.
      const i = at.get(file.realPath);
      return i !== undefined && fields[i + 1] === stamp
        ? { sha256: fields[i + 2]!, mimeType: fields[i + 3]! }
        : undefined;
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
      const out: string[] = [];
      for (const realPath of new Set([...at.keys(), ...changes.keys()])) {
        const e = entry(realPath);
        if (e) out.push(`${realPath}\0${e[0]}\0${e[1]}\0${e[2]}\0`);
      }
      writeChecksummed(path, `${VERSION}\n${out.join('')}`);
      dirty = false;
    },
  };
}

function loadFields(path: string): string[] {
  const body = readChecksummed(path);
  if (body === undefined) return [];
  const newline = body.indexOf('\n');
  if (newline < 0 || body.slice(0, newline) !== VERSION || !body.endsWith('\0')) return [];
  const fields = body.slice(newline + 1, -1).split('\0');
  return fields.length % FIELDS === 0 ? fields : [];
}
