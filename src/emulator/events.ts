/**
 * What `extract serve` reports while it runs, one entry per API request and per delivery
 * attempt; the serve command prints them as lines (`<--` in, `-->` out) or NDJSON.
 * Paths and URLs are stripped of their query and credentials before they get here.
 */
export type DeliveryEvent = {
  type: 'delivery';
  at: string;
  delivery_id: string;
  document_id: string;
  integration_id: string;
  method: string;
  url: string;
  attempt: number;
  status: number | null;
  error: string | null;
  ms: number;
};

export type ServerEvent =
  | {
      type: 'request';
      at: string;
      method: string;
      path: string;
      status: number;
      ms: number;
      document_id?: string | undefined;
    }
  | DeliveryEvent;

/** A URL fit for a log line: no user:password, no query (signatures live there). */
export function loggableUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return raw.split('?')[0]!.replace(/\/\/[^@/]*@/, '//');
  }
}

export function formatEvent(e: ServerEvent): string {
  if (e.type === 'request') {
    return `<-- ${e.method} ${e.path} ${e.status}${e.document_id ? ` ${e.document_id}` : ''} ${e.ms}ms`;
  }
  const outcome = e.status !== null ? String(e.status) : `failed (${e.error})`;
  return `--> document.processed ${e.document_id} to ${e.integration_id} (${e.method} ${e.url}) attempt ${e.attempt}: ${outcome} ${e.ms}ms`;
}
