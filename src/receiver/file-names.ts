import { createHash } from 'node:crypto';

/**
 * The file name of a document in `listen -o DIR/`: an injective encoding of its document_id,
 * so distinct ids never share a file and no id leaves the directory.
 * - Every UTF-8 byte outside `[A-Za-z0-9._-]` is written `%XX` (upper-case hex), `%` included.
 * - A leading `.` is written `%2E` (no hidden file, no `.` or `..`); the empty id is `%`.
 * - A name longer than {@link MAX_ENCODED_NAME} keeps its first characters and ends in
 *   `~` plus 32 hex digits of the id's SHA-256 (`~` never appears otherwise).
 */
const MAX_ENCODED_NAME = 200;

export function documentFileName(documentId: string): string {
  let encoded = '';
  for (const byte of Buffer.from(documentId, 'utf8')) {
    const c = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9._-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (encoded.startsWith('.')) encoded = `%2E${encoded.slice(1)}`;
  if (encoded === '') encoded = '%';
  if (encoded.length > MAX_ENCODED_NAME) {
    let head = encoded.slice(0, MAX_ENCODED_NAME - 33);
    // Never cut a %XX in two.
    const cut = head.lastIndexOf('%');
    if (cut >= head.length - 2) head = head.slice(0, cut);
    encoded = `${head}~${createHash('sha256').update(documentId, 'utf8').digest('hex').slice(0, 32)}`;
  }
  return `${encoded}.json`;
}
