/**
 * Removes anything shaped like an API key, a bearer or basic credential, or an upload
 * signature from text that is about to be printed, logged or written to a report.
 */
export function redact(text: string): string {
  return text
    .replace(/ext_[A-Za-z0-9_-]+/g, 'ext_***')
    .replace(/\b(Bearer|Basic)\s+[^\s"',]+/gi, '$1 ***')
    .replace(/([?&]sig=)[0-9a-fA-F]+/g, '$1***');
}
