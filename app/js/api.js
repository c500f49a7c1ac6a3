// The page's only I/O: the emulator's own JSON surface under /_emulator/ (same origin, no key).

const PREFIX = '/_emulator';

/** An answer other than 2xx; `message` is the emulator's own sentence (ErrorBody.error). */
export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Listeners told whether the emulator answered (true) or could not be reached (false). */
const reachability = new Set();
export const onReachability = (fn) => reachability.add(fn);
const report = (ok) => {
  for (const fn of reachability) fn(ok);
};

/** Calls `method path` with an optional JSON or FormData body and returns the parsed JSON. */
export async function api(method, path, body) {
  const init = { method, headers: { accept: 'application/json' } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(PREFIX + path, init);
  } catch {
    report(false);
    throw new ApiError(0, 'the emulator is not reachable: is `extract serve` still running?', 'unreachable');
  }
  report(true);
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text for the message */
  }
  if (!res.ok) {
    const message = data && typeof data.error === 'string' ? data.error : `${method} ${path} answered ${res.status}`;
    throw new ApiError(res.status, message, data?.code);
  }
  return data;
}

export const get = (path) => api('GET', path);

/**
 * GET for a view's refresh: on failure the view's problem banner says why and the result is
 * undefined; on success the banner is hidden.
 */
export async function getOrShow(path, problem) {
  try {
    const body = await get(path);
    problem.hidden = true;
    return body;
  } catch (err) {
    problem.hidden = false;
    problem.textContent = err.message;
    return undefined;
  }
}
export const post = (path, body) => api('POST', path, body ?? {});
export const del = (path) => api('DELETE', path);

/** A query string from an object, leaving out empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

let parsers;
/** The parsers come from the configuration and do not change while serve runs: fetched once. */
export function getParsers() {
  parsers ??= get('/parsers')
    .then((b) => b.parsers)
    .catch((err) => {
      parsers = undefined;
      throw err;
    });
  return parsers;
}
