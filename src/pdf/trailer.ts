/**
 * Whether a PDF is encrypted, told from its trailer without loading a PDF library: a run that
 * sends plain PDFs reads a few kilobytes of each more and loads nothing (document.ts loads the
 * library only for a file that needs it). The latest trailer names /Encrypt when the file is
 * encrypted (an incremental update repeats it); it is either a `trailer << >>` dictionary just
 * before `startxref` or, in a file with a cross-reference stream, that stream's dictionary,
 * found at the offset `startxref` gives. A linearized file's last trailer is not the document's:
 * the first page's section, at the start of the file, holds its /Encrypt.
 */
import type { FileHandle } from 'node:fs/promises';

/** How much of the end is read first: `startxref`, its offset and `%%EOF`, and usually the trailer. */
const TAIL = 4096;
/** How much is read at the cross-reference stream's offset: its dictionary comes before its data. */
const XREF_HEAD = 4096;
/** How much is read at a linearized file's first-page section: its table (20 bytes an object), then its trailer. */
const LINEARIZED_HEAD = 64 * 1024;

/** The trailer dictionary's text in `tail` (latin1), when it holds one; else undefined. */
function _trailerIn(tail: string): string | undefined {
  const start = tail.lastIndexOf('trailer');
  const end = tail.lastIndexOf('startxref');
  return start !== -1 && end > start ? tail.slice(start, end) : undefined;
}

/** The offset `startxref` names in the tail, or undefined. */
function _startXref(tail: string): number | undefined {
  const match = /startxref\s+(\d+)\s+%%EOF/.exec(tail.slice(tail.lastIndexOf('startxref')));
  return match ? Number(match[1]) : undefined;
}

/** Whether a trailer or cross-reference stream dictionary's text names /Encrypt. */
function _namesEncrypt(dict: string): boolean {
  const streamAt = dict.indexOf('stream');
  return /\/Encrypt[\s/<[0-9]/.test(streamAt === -1 ? dict : dict.slice(0, streamAt));
}

/** Whether the PDF of `size` bytes that `read(start, length)` reads is encrypted, by its latest trailer. */
async function _encrypted(size: number, read: (start: number, length: number) => Promise<Buffer>): Promise<boolean> {
  const tailStart = Math.max(0, size - TAIL);
  const text = (await read(tailStart, size - tailStart)).toString('latin1');
  const trailer = _trailerIn(text);
  if (trailer !== undefined) {
    if (_namesEncrypt(trailer)) return true;
    // A last trailer with /Root is the document's. A linearized file's ("Fast Web View") holds
    // only /Size: its startxref names the first page's section at the start, whose trailer counts.
    if (/\/Root[\s/]/.test(trailer)) return false;
  }
  const offset = _startXref(text);
  if (offset === undefined || offset >= size) return false;
  const head = trailer === undefined ? XREF_HEAD : LINEARIZED_HEAD;
  return _namesEncrypt((await read(offset, Math.min(head, size - offset))).toString('latin1'));
}

/** Whether the PDF open at `handle` (of `size` bytes) is encrypted. */
export function pdfIsEncrypted(handle: FileHandle, size: number): Promise<boolean> {
  return _encrypted(size, async (start, length) => {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, start);
    return buffer.subarray(0, bytesRead);
  });
}

/** Whether a PDF in memory is encrypted. */
export function pdfBytesAreEncrypted(bytes: Uint8Array): Promise<boolean> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return _encrypted(buffer.length, async (start, length) => buffer.subarray(start, start + length));
}
