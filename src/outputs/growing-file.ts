import { mkdir, open, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ExtractError } from '../errors.ts';
import { readTextOrEmpty } from './atomic.ts';
import { DOCUMENT_COLUMNS } from './flatten.ts';

/**
 * The one writer of outputs that grow, for `extract watch` and `extract listen`: a JSON Lines
 * or CSV file appended to, never rewritten, so what a batch costs is its own records, whatever
 * the file already holds. Each append reaches the disk (fdatasync) before it resolves.
 *
 * One rule for a torn last record (bytes after the last whole record: a write cut short by a
 * kill or a power loss): it is cut off when the file is opened. Nothing is lost by that, since
 * both writers keep each record elsewhere first and write again any the output lacks: watch
 * from its journal (a completed document whose record the output does not hold is written
 * from the journal, uncharged), listen from its inbox (its start adds every document the
 * output lacks). Kept, the torn bytes would be a line no reader can parse in the middle of the
 * file. A last record that is whole but lacks its newline (a file another program wrote) is
 * kept, and ended before the next append.
 */
export type GrowingFile = {
  append(text: string): Promise<void>;
};

export type GrowingFormat = 'jsonl' | 'csv';

/** Opens `path` to grow (missing is empty); `text` is what it held, a torn last record cut off. */
export async function openGrowingFile(
  path: string,
  format: GrowingFormat,
): Promise<{ file: GrowingFile; text: string }> {
  let text = await readTextOrEmpty(path);
  let needsNewline = false;
  if (text !== '' && !text.endsWith('\n')) {
    const { end, whole } = format === 'jsonl' ? _jsonlTail(text) : _csvTail(text);
    if (whole) needsNewline = true;
    else {
      text = text.slice(0, end);
      await truncate(path, Buffer.byteLength(text));
    }
  }
  const file: GrowingFile = {
    async append(more) {
      if (more === '') return;
      const prefix = needsNewline ? '\n' : '';
      await appendDurably(path, prefix + more);
      needsNewline = false;
    },
  };
  return { file, text };
}

/** The file and document_id of each JSON line of a growing file's text; a torn or foreign line names none. */
export function jsonlRows(text: string): Array<{ file: string | null; document_id: string | null }> {
  const rows: Array<{ file: string | null; document_id: string | null }> = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const { file, document_id: id } = value as { file?: unknown; document_id?: unknown };
    rows.push({ file: typeof file === 'string' ? file : null, document_id: typeof id === 'string' ? id : null });
  }
  return rows;
}

/** A JSON array cannot grow: rewriting it whole for each document is what growing outputs avoid. */
export function cannotGrow(what: string, command: 'watch' | 'listen'): ExtractError {
  return new ExtractError(
    'usage',
    `${what} writes one JSON array, which cannot grow as documents ${command === 'watch' ? 'complete' : 'arrive'}: use -o FILE.jsonl, FILE.csv or DIR/ with extract ${command}`,
  );
}

type Tail = {
  /** Where the last record ending in a newline ends. */ end: number /** The bytes after it are a record. */;
  whole: boolean;
};

/** JSON Lines: a line is a record when it parses. */
function _jsonlTail(text: string): Tail {
  const end = text.lastIndexOf('\n') + 1;
  try {
    JSON.parse(text.slice(end));
    return { end, whole: true };
  } catch {
    return { end, whole: false };
  }
}

/**
 * CSV: a record ends at a newline outside quotes (a cell may hold newlines). The bytes after
 * the last one are a record when their quotes are closed and they have as many cells as the
 * header (a row cut at a comma has fewer). A file whose header is not a header of records is
 * left as it is (the CSV writer refuses it, untouched); with no whole line at all, the bytes
 * are torn when they are a piece of a header of records.
 */
function _csvTail(text: string): Tail {
  const ours = DOCUMENT_COLUMNS.join(',');
  let quoted = false;
  let end = 0;
  let headerCells: number | undefined;
  let cells = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === ',') cells++;
    else if (c === '\n') {
      headerCells ??= cells;
      cells = 1;
      end = i + 1;
    }
  }
  if (headerCells === undefined) return { end, whole: !(ours.startsWith(text) || text.startsWith(ours)) };
  if (!text.startsWith(`${ours},`) && !text.startsWith(`${ours}\n`)) return { end, whole: true };
  return { end, whole: !quoted && cells === headerCells };
}

/** Appends `text` to `path` (made with its folder when missing), on the disk before it resolves. */
export async function appendDurably(path: string, text: string): Promise<void> {
  if (text === '') return;
  await mkdir(dirname(path), { recursive: true });
  const handle = await open(path, 'a', 0o644);
  try {
    await handle.write(text);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
