import { API_KEY_CHARS, API_KEY_PREFIX } from './contract/constants.ts';

/**
 * Secrets out of text that is about to be printed, logged, or written to a report or a journal.
 * By what is known first: every secret this process was given (`rememberSecret`: the API key,
 * a state URL's password) is replaced wherever it appears, whatever its characters. Then by
 * parsing: a URL's userinfo is removed whole, where the URL parser says it ends (the last `@` of
 * the authority), and `password=`/`sig=` parameters. Shapes (`ext_…`, `Bearer …`) come last,
 * for keys this process never saw (one another tool printed).
 */

/** The longest first, so that a secret holding another is replaced whole. */
const known: string[] = [];

/** Secrets shorter than this are too likely to be ordinary words to replace everywhere. */
const MIN_SECRET_CHARS = 6;

/** Replaced wherever it appears in redacted text, as written and as percent-encoded. */
export function rememberSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_CHARS) return;
  for (const form of new Set([value, encodeURIComponent(value)])) {
    if (known.includes(form)) continue;
    known.push(form);
  }
  known.sort((a, b) => b.length - a.length);
}

/** For tests: forget what rememberSecret was told. */
export function forgetSecrets(): void {
  known.length = 0;
}

const KEY_SHAPE = new RegExp(`${API_KEY_PREFIX}[${API_KEY_CHARS}]+=*`, 'g');

export function redact(text: string): string {
  return redactUrl(text)
    .replace(KEY_SHAPE, `${API_KEY_PREFIX}***`)
    .replace(/\b(Bearer|Basic)\s+[^\s"',]+/gi, '$1 ***')
    .replace(/([?&]sig=)[0-9a-fA-F]+/g, '$1***');
}

/** What may follow `scheme://` in running text: up to a space, a quote or an angle bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/**
 * `postgres://user:se@cret@host/db?password=x` -> `postgres://***@host/db?password=***`, and
 * every remembered secret replaced. A URL the parser refuses loses everything up to its last `@`.
 */
export function redactUrl(text: string): string {
  return redactKnown(text)
    .replace(URL_IN_TEXT, userinfoRemoved)
    .replace(/([?&](?:ssl)?password=)[^&\s"']*/gi, '$1***');
}

function redactKnown(text: string): string {
  let out = text;
  for (const secret of known) {
    if (out.includes(secret))
      out = out.replaceAll(secret, secret.startsWith(API_KEY_PREFIX) ? `${API_KEY_PREFIX}***` : '***');
  }
  return out;
}

function userinfoRemoved(candidate: string): string {
  const start = candidate.indexOf('//') + 2;
  let parsed: URL | undefined;
  try {
    parsed = new URL(candidate);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined) {
    // Not a URL the parser accepts (a password holding `/` or `#` unencoded, say): whatever
    // stands before its last `@` may be a credential.
    const at = candidate.lastIndexOf('@');
    return at > start ? `${candidate.slice(0, start)}***${candidate.slice(at)}` : candidate;
  }
  if (parsed.username === '' && parsed.password === '') return candidate;
  // The authority ends at the first `/`, `?` or `#` (and `\` for http(s)); its userinfo at the
  // last `@` before that, as the parser read it.
  const rest = candidate.slice(start);
  const end = rest.search(/[/?#\\]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf('@');
  if (at < 0) return `${candidate.slice(0, start)}***@${parsed.host}${parsed.pathname}`;
  return `${candidate.slice(0, start)}***${rest.slice(at)}`;
}
