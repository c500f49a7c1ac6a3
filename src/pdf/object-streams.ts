/**
 * The object streams of a PDF (/Type /ObjStm), inflated within a bound before the PDF library
 * reads the file: the library inflates each whole in memory as it loads, so a few megabytes of
 * deflate claiming gigabytes (a bomb) would exhaust the machine's memory before any page is cut.
 * Found by their dictionaries in the file's bytes; each inflated by node's zlib, which stops at
 * the bound, its output counted and dropped.
 */
import { constants, inflateSync } from 'node:zlib';

/** The most bytes one object stream may inflate to: real ones hold objects' dictionaries, kilobytes to a few megabytes. */
const MAX_OBJECT_STREAM_BYTES = 64 * 1024 * 1024;

/** Why the PDF's object streams are refused (one inflates past the bound), or undefined. */
export function objectStreamBomb(bytes: Uint8Array): string | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = buffer.indexOf('/ObjStm'); at !== -1; at = buffer.indexOf('/ObjStm', at + 7)) {
    const start = buffer.indexOf('stream', at);
    if (start === -1) break;
    let data = start + 'stream'.length;
    if (buffer[data] === 0x0d) data++;
    if (buffer[data] === 0x0a) data++;
    const end = buffer.indexOf('endstream', data);
    try {
      inflateSync(buffer.subarray(data, end === -1 ? buffer.length : end), {
        maxOutputLength: MAX_OBJECT_STREAM_BYTES,
        finishFlush: constants.Z_SYNC_FLUSH,
      });
    } catch (err) {
      if (err instanceof RangeError)
        return `an object stream inflates past ${MAX_OBJECT_STREAM_BYTES / (1024 * 1024)} MiB (a PDF bomb?)`;
      // Not deflate, or damaged: the library says what it makes of it.
    }
    at = start;
  }
  return undefined;
}
