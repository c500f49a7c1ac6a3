/**
 * How deep a JSON answer nests, found by one loop over its text before anything parses it:
 * V8's JSON.stringify, zod and the outputs all recurse, so an answer nested 200,000 deep
 * overflows the stack somewhere after the document was charged. A loop cannot overflow.
 *
 * 64 levels: a result mirrors a Field definition (an Object field nests an object, a Table
 * field an array of row objects), so a real document's answer is a handful of levels deep;
 * 64 is many times that and far below what any recursive reader of it can take.
 */
export const MAX_ANSWER_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;

/** The index of the quote that ends the string opened at `at` (text.length when it never ends). */
function endOfString(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return text.length;
}

function skipSpace(text: string, at: number): number {
  let i = at;
  while (i < text.length && /\s/.test(text[i] ?? '')) i++;
  return i;
}

/** `text` as JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether `text` opens more than `limit` objects or arrays inside one another. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = endOfString(text, i);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

/**
 * The scalar members of the answer's top-level object (document_id, page_count...), read
 * without parsing the nested values between them: what an answer too deep to parse still says.
 */
export function topLevelScalars(text: string): Record<string, unknown> {
  const top: Record<string, unknown> = {};
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
    else if (c === QUOTE) {
      const end = endOfString(text, i);
      const colon = skipSpace(text, end + 1);
      if (depth !== 1 || text.charCodeAt(colon) !== COLON) {
        i = end;
        continue;
      }
      const key = String(parseJson(text.slice(i, end + 1)));
      const start = skipSpace(text, colon + 1);
      const first = text.charCodeAt(start);
      if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
        i = start - 1;
        continue;
      }
      let stop = first === QUOTE ? endOfString(text, start) + 1 : start;
      if (first !== QUOTE) while (stop < text.length && !/[\s,}\]]/.test(text[stop] ?? '')) stop++;
      top[key] = parseJson(text.slice(start, stop));
      i = stop - 1;
    }
  }
  return top;
}
