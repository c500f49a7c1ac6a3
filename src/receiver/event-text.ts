import { isUtf8 } from 'node:buffer';

/**
 * An event's body as text. A body that is valid UTF-8 (every honest sender's) is decoded as it
 * is. In one that is not, each byte that cannot be read is written `\xHH` (a backslash, x, two
 * hex digits) instead of U+FFFD: two document_ids that differ only in such bytes stay two
 * documents, not one and a "duplicate" (the deployed sender never retries a 4xx, so refusing the
 * event would lose it). The route and the worker decode with this one function, so the id in the
 * acknowledgement is the id deduplicated and written.
 */
export function eventText(body: Uint8Array): string {
  try {
    return STRICT.decode(body);
  } catch {
    // Not UTF-8: escaped byte by byte below.
  }
  let out = '';
  let start = 0;
  for (let i = 0; i < body.length; ) {
    const length = _sequenceAt(body, i);
    if (length > 0) {
      i += length;
      continue;
    }
    // Inside a JSON string `\\` is one backslash, so the decoded string holds `\xHH`.
    out += `${LENIENT.decode(body.subarray(start, i))}\\\\x${body[i]!.toString(16).toUpperCase().padStart(2, '0')}`;
    i++;
    start = i;
  }
  return out + LENIENT.decode(body.subarray(start));
}

const STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LENIENT = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The length of the well-formed UTF-8 sequence at `i`, or 0 when there is none: the shortest
 * run of bytes from `i` that Node's validator (RFC 3629: no overlong forms, no surrogates) takes.
 */
function _sequenceAt(b: Uint8Array, i: number): number {
  for (let n = 1; n <= 4 && i + n <= b.length; n++) if (isUtf8(b.subarray(i, i + n))) return n;
  return 0;
}
