/**
 * Removes anything shaped like an API key, a bearer or basic credential, an upload
 * signature, or the password of a URL (the state database's) from text that is about to be
 * printed, logged or written to a report.
 */
export function redact(text: string): string {
  return redactUrl(text)
    .replace(/ext_[A-Za-z0-9_-]+/g, 'ext_***')
    .replace(/\b(Bearer|Basic)\s+[^\s"',]+/gi, '$1 ***')
    .replace(/([?&]sig=)[0-9a-fA-F]+/g, '$1***');
}

/** `postgres://user:secret@host/db?password=x` -> `postgres://user:***@host/db?password=***`. */
export function redactUrl(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s"']*):[^@/?#\s"']*@/gi, '$1:***@')
    .replace(/([?&]password=)[^&\s"']*/gi, '$1***');
}
