/**
 * Whether a page's content stream draws text or an image: what `--split blank` asks of each page
 * (a page that draws neither separates documents; lines and fills alone do not make a page
 * a document). Pure: it reads the operators of decoded content bytes (PDF 32000-1, 7.8.2 and
 * annex A), and asks `drawsXObject` about each XObject a `Do` paints (document.ts answers from
 * the page's resources: an image draws, a form draws when its own content does).
 */

/** The operators that show text (Tj, TJ, ' and "), and BI, which begins an inline image. */
const DRAWING_OPERATORS = new Set(['Tj', 'TJ', "'", '"', 'BI']);

function _isWhite(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
}

function _isDelimiter(c: number): boolean {
  // ( ) < > [ ] { } / %
  return (
    c === 0x28 ||
    c === 0x29 ||
    c === 0x3c ||
    c === 0x3e ||
    c === 0x5b ||
    c === 0x5d ||
    c === 0x7b ||
    c === 0x7d ||
    c === 0x2f ||
    c === 0x25
  );
}

/** The index just past a literal string that opens at `i` (nested parentheses, backslash escapes). */
function _pastLiteral(bytes: Uint8Array, i: number): number {
  let depth = 0;
  for (; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x5c) i++;
    else if (c === 0x28) depth++;
    else if (c === 0x29 && --depth === 0) return i + 1;
  }
  return i;
}

/** The index just past the run of regular characters that starts at `i`. */
function _pastRegular(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && !_isWhite(bytes[i]!) && !_isDelimiter(bytes[i]!)) i++;
  return i;
}

/**
 * Whether `content` (a decoded content stream) shows text or paints an image: a text-showing
 * operator, an inline image, or `Do` of an XObject `drawsXObject` says draws.
 */
export function drawsTextOrImage(content: Uint8Array, drawsXObject: (name: string) => boolean): boolean {
  let lastName: string | undefined;
  let i = 0;
  while (i < content.length) {
    const c = content[i]!;
    if (_isWhite(c)) i++;
    else if (c === 0x25) {
      while (i < content.length && content[i] !== 0x0a && content[i] !== 0x0d) i++;
    } else if (c === 0x28) i = _pastLiteral(content, i);
    else if (c === 0x3c && content[i + 1] === 0x3c) i += 2;
    else if (c === 0x3e && content[i + 1] === 0x3e) i += 2;
    else if (c === 0x3c) {
      while (i < content.length && content[i] !== 0x3e) i++;
      i++;
    } else if (c === 0x2f) {
      const end = _pastRegular(content, i + 1);
      lastName = Buffer.from(content.subarray(i + 1, end)).toString('latin1');
      i = end;
    } else if (_isDelimiter(c)) i++;
    else {
      const end = _pastRegular(content, i);
      const word = Buffer.from(content.subarray(i, end)).toString('latin1');
      if (DRAWING_OPERATORS.has(word)) return true;
      if (word === 'Do' && lastName !== undefined && drawsXObject(lastName)) return true;
      i = end;
    }
  }
  return false;
}
