/**
 * A URL is an input: `https://…` on the command line or a line of the list on stdin. Its bytes
 * are read into the run's private part space (part.ts) before anything is sent, because a
 * document is known by its content (the journal's identity): a URL fetched again the next night
 * is hashed before the run decides whether to pay, so an unchanged document is never paid twice,
 * and a changed one is a new document whatever its URL.
 *
 * The source is another party's server: the user's `--header` lines go to the URL's own origin
 * only (a redirect to another origin drops them, as curl does without --location-trusted), the
 * service's key never goes there, a redirect from https to http is refused, and sizes, redirects
 * and waits are bounded. What a URL is called in records, reports and logs has no credentials:
 * no user:password, no query (a presigned URL's signature is its query).
 */
import { basename } from 'node:path';
import type { Dispatcher } from 'undici';
import { isDiskFull } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { inert } from '../inert.ts';
import { rememberSecret } from '../redact.ts';
import { CREDENTIAL_HEADER } from './header-file.ts';
import { sizeText } from './container.ts';
import { type PartSpace, TooLarge } from './part.ts';

/** Whether an input names a URL (only http and https are read). */
export function isUrl(input: unknown): input is string {
  return typeof input === 'string' && /^https?:\/\/[^/\s]/i.test(input);
}

/**
 * The URL as records, reports and messages show it: scheme, host, port and path; a query is
 * `?…`, credentials are left out. Stable across nights for a presigned URL whose signature changes.
 */
export function shownUrl(input: string): string {
  try {
    const url = new URL(input);
    return `${url.protocol}//${url.host}${url.pathname}${url.search === '' ? '' : '?…'}`;
  } catch {
    return input.replace(/\/\/[^/@]*@/, '//').replace(/\?.*$/s, '?…');
  }
}

export type RemoteBounds = {
  /** The most bytes one URL may hold. */
  bytes: number;
  /** The most redirects followed for one URL. */
  redirects: number;
  /** The longest wait for the source's answer, and between two chunks of its body. */
  waitMs: number;
};

const MiB = 1024 * 1024;

export const REMOTE_BOUNDS: RemoteBounds = { bytes: 2048 * MiB, redirects: 5, waitMs: 30_000 };

export type RemoteOptions = {
  space: PartSpace;
  /** The user's `--header 'Name: value'` lines, for each URL's own origin. */
  headers?: readonly string[] | undefined;
  bounds?: RemoteBounds | undefined;
  dispatcher?: Dispatcher | undefined;
};

/** A URL read into the part space: an input file of the run's (batch/discover.ts InputFile), with no file of the user's to move. */
export type RemoteInput = {
  file: string;
  path: string;
  realPath: string;
  size: number;
  explicit: false;
  rel: string;
  remote: true;
};

/** A reader of URLs for one run, through the process's dispatcher (or the one given). */
export class RemoteReader {
  readonly #options: RemoteOptions;
  readonly #bounds: RemoteBounds;
  readonly #headers: Record<string, string>;

  constructor(options: RemoteOptions) {
    this.#options = options;
    this.#bounds = options.bounds ?? REMOTE_BOUNDS;
    this.#headers = parseHeaders(options.headers ?? []);
  }

  /** The URL's bytes as an input file of the part space, or why it could not be read. */
  async read(input: string): Promise<RemoteInput | { file: string; reason: string }> {
    const shown = shownUrl(input);
    try {
      const { body, url } = await this.#fetch(input);
      const name = basename(decodeURIComponentSafe(new URL(url).pathname)) || 'document';
      const written = await this.#options.space.write(name, body, this.#bounds.bytes);
      return {
        file: shown,
        path: written.path,
        realPath: shown,
        size: written.size,
        explicit: false,
        rel: name,
        remote: true,
      };
    } catch (err) {
      const why = isDiskFull(err)
        ? `${this.#options.space.fullText('its bytes')}; not sent`
        : reasonOf(err, this.#bounds);
      return { file: shown, reason: `${inert(shown)}: ${why}` };
    }
  }

  async #fetch(input: string): Promise<{ body: Dispatcher.ResponseData['body']; url: string }> {
    // undici loads only when a URL is read: a rerun over files loads no npm package.
    const { requestUrl } = await import('../net/request.ts');
    const first = new URL(input);
    const own = withUserinfo(this.#headers, first);
    let url = first;
    for (let hops = 0; ; hops++) {
      const sameOrigin = url.origin === first.origin;
      const answer = await requestUrl(
        url.href,
        {
          method: 'GET',
          headers: sameOrigin ? own : {},
          headersTimeout: this.#bounds.waitMs,
          bodyTimeout: this.#bounds.waitMs,
        },
        this.#options.dispatcher,
      );
      const { statusCode, headers, body } = answer;
      const location = headers.location;
      if (statusCode >= 300 && statusCode < 400 && typeof location === 'string') {
        discard(body);
        if (hops >= this.#bounds.redirects) throw new Unreadable(`more than ${this.#bounds.redirects} redirects`);
        url = redirectTarget(url, location);
        continue;
      }
      if (statusCode < 200 || statusCode >= 300) {
        discard(body);
        throw new Unreadable(`the source answered HTTP ${statusCode}${hintFor(statusCode)}`);
      }
      const length = Number(headers['content-length']);
      if (Number.isFinite(length) && length > this.#bounds.bytes) {
        discard(body);
        throw new TooLarge(length);
      }
      return { body, url: url.href };
    }
  }
}

/**
 * The reader of a run's URLs, in the order the run takes them: up to `parallel` read at once,
 * ahead of the one taken (a URL is mostly waiting on another party's server), never more, so a
 * list of 100,000 URLs holds `parallel` downloads and their answers, not the list's. `read` never
 * throws (RemoteReader.read answers a reason); a URL taken that was not listed is read then.
 */
export function readAhead<R>(
  urls: readonly string[],
  read: (url: string) => Promise<R>,
  parallel: number,
): (url: string) => Promise<R> {
  const list = [...new Set(urls)];
  const started = new Map<string, Promise<R>>();
  let next = 0;
  let taken = 0;
  return (url) => {
    taken++;
    while (next < list.length && next < taken + Math.max(0, parallel - 1)) {
      const ahead = list[next++] as string;
      if (!started.has(ahead)) started.set(ahead, read(ahead));
    }
    const reading = started.get(url) ?? read(url);
    started.delete(url);
    return reading;
  };
}

class Unreadable extends Error {}

/**
 * A URL's `user:password@` as the source's Basic credential (as curl sends it), to its own origin
 * only; a `--header 'Authorization: …'` of the user's wins. Never part of the URL requested.
 */
function withUserinfo(headers: Record<string, string>, url: URL): Record<string, string> {
  if ((url.username === '' && url.password === '') || headers.authorization !== undefined) return headers;
  const user = `${decodeURIComponentSafe(url.username)}:${decodeURIComponentSafe(url.password)}`;
  return { ...headers, authorization: `Basic ${Buffer.from(user).toString('base64')}` };
}

/** Where a redirect leads, if extract follows it: http(s) only, never from https down to plain http. */
export function redirectTarget(from: URL, location: string): URL {
  const next = new URL(location, from);
  if (next.protocol !== 'https:' && next.protocol !== 'http:')
    throw new Unreadable(`redirected to a ${next.protocol} address, which extract does not read`);
  if (from.protocol === 'https:' && next.protocol === 'http:')
    throw new Unreadable('redirected from https to plain http: refused');
  return next;
}

/** An answer's body not read: its connection is closed, and the abort is no error of the run's. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

function reasonOf(err: unknown, bounds: RemoteBounds): string {
  if (err instanceof Unreadable) return err.message;
  if (err instanceof TooLarge) return `larger than ${sizeText(bounds.bytes)}: not read`;
  const code = (err as { code?: unknown }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
    return `the source did not answer within ${bounds.waitMs / 1000} s`;
  const cause = (err as { cause?: { code?: unknown } }).cause?.code ?? code;
  if (typeof cause === 'string') return `cannot read it (${cause}): check the address and that the source is up`;
  return `cannot read it: ${err instanceof Error ? err.message : String(err)}`;
}

function hintFor(status: number): string {
  if (status === 401 || status === 403)
    return ": give its credentials with --header 'Authorization: …', or a presigned URL";
  if (status === 404) return ': no such document there';
  if (status >= 500) return ': the source failed; the next run tries it again';
  return '';
}

/** `Name: value` lines as request headers; a line without a colon is the user's mistake. */
export function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      // The line itself is not repeated: it may be a credential given without its name.
      throw new ExtractError(
        'usage',
        "--header takes 'Name: value' (as curl's -H), e.g. --header 'Authorization: Bearer …'",
      );
    const value = line.slice(colon + 1).trim();
    // A line break would end the header and start another (curl refuses it too); the value is not repeated.
    if (/[\r\n\0]/.test(line))
      throw new ExtractError(
        'usage',
        `--header ${name}: its value holds a line break or a NUL byte: give it on one line`,
      );
    if (CREDENTIAL_HEADER.test(name)) {
      // The whole value and its credential alone ("Bearer <token>"): neither is ever printed.
      rememberSecret(value);
      rememberSecret(value.split(/\s+/).at(-1));
    }
    headers[name.toLowerCase()] = value;
  }
  return headers;
}

function decodeURIComponentSafe(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
