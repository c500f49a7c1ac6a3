import type { ReceiverStats } from './options.ts';

/**
 * What the receiver tells its user, one line each, as text in the spirit of the Stripe
 * CLI (`<--` for what came in) or, with --json, as NDJSON with the same facts. No line
 * ever carries a credential or a presented Authorization value.
 */
type LogEvent =
  | { type: 'event'; document_id: string; parser: string; pages: number; outcome: 'new' | 'duplicate'; method: string }
  | { type: 'review'; document_id: string; file_name: string; null_fields: string[] }
  | { type: 'unauthorized'; status: 401; method: string; path: string; reason: string }
  | { type: 'invalid'; status: 400; method: string; reason: string; rejected_id: number }
  | { type: 'too_large'; status: 413; method: string; limit_bytes: number }
  | { type: 'forbidden'; status: 403; method: string; reason: string }
  | { type: 'test'; method: string; document_id: string }
  | { type: 'quarantined'; inbox_seq: number; reason: string }
  | { type: 'error'; message: string }
  | ({ type: 'summary' } & ReceiverStats & { new: number });

export type Logger = (event: LogEvent) => void;

/** Null fields named in a text review line; the rest are counted. */
const REVIEW_FIELDS_SHOWN = 20;

export function createLogger(log: (line: string) => void, json: boolean): Logger {
  return (event) => log(json ? JSON.stringify(event) : formatText(event));
}

function formatText(event: LogEvent): string {
  switch (event.type) {
    case 'event':
      return `<-- ${event.document_id} parser=${_quoted(event.parser)} pages=${event.pages} ${event.outcome}`;
    case 'review': {
      // A line stays a line: past the first few, the count (review.jsonl lists them all).
      const shown = event.null_fields.slice(0, REVIEW_FIELDS_SHOWN).join(', ');
      const more = event.null_fields.length - REVIEW_FIELDS_SHOWN;
      return `    ${event.document_id} (${event.file_name}) needs review: null ${shown}${more > 0 ? ` and ${more} more (review.jsonl)` : ''}`;
    }
    case 'unauthorized':
      return `<-- 401 ${event.method} ${event.path}: ${event.reason}`;
    case 'invalid':
      return `<-- 400 ${event.method}: ${event.reason} (kept as rejected #${event.rejected_id})`;
    case 'too_large':
      return `<-- 413 ${event.method}: body over ${event.limit_bytes} bytes`;
    case 'forbidden':
      return `<-- 403 ${event.method}: ${event.reason}`;
    case 'test':
      return `<-- test event ${event.document_id} (an integration's test action: acknowledged, not written)`;
    case 'quarantined':
      return `error: inbox event #${event.inbox_seq} cannot be written (${event.reason}); it is quarantined in the inbox and the next events go on`;
    case 'error':
      return `error: ${event.message}`;
    case 'summary':
      return `received ${event.received} (${event.new} new, ${event.duplicates} duplicate), rejected ${event.rejected}, unauthorized ${event.unauthorized}`;
  }
}

/** Parser names are chosen by people and may hold spaces. */
function _quoted(text: string): string {
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text);
}
