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

/** The length of the well-formed UTF-8 sequence at `i` (RFC 3629's table), or 0 when there is none. */
function _sequenceAt(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c === 0xee || c === 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}
