import { inert } from '../inert.ts';
import type { ReceiverStats } from './options.ts';

/**
 * What the receiver tells its user, one line each, as text in the spirit of the Stripe
 * CLI (`<--` for what came in) or, with --json, as NDJSON with the same facts. No line
 * ever carries a credential or a presented Authorization value.
 */
type LogEvent =
  | {
      type: 'event';
      document_id: string;
      parser: string;
      pages: number;
      outcome: 'new' | 'duplicate';
      method: string;
      /** A duplicate whose data differs from the first event's: kept in the inbox at this seq, not written. */
      other_data?: true;
      inbox_seq?: number;
    }
  | { type: 'review'; document_id: string; file_name: string; null_fields: string[] }
  | { type: 'unauthorized'; status: 401; method: string; path: string; reason: string }
  | { type: 'invalid'; status: 400; method: string; reason: string; rejected_id: number }
  | { type: 'too_large'; status: 413; method: string; limit_bytes: number }
  | { type: 'forbidden'; status: 403; method: string; reason: string }
  | { type: 'test'; method: string; document_id: string }
  | { type: 'quarantined'; inbox_seq: number; reason: string }
  | { type: 'kept'; inbox_seq: number; document_id: string; reason: string }
  | { type: 'field_ids'; document_id: string; key: string }
  | { type: 'error'; message: string }
  | ({ type: 'summary' } & ReceiverStats & { new: number });

export type Logger = (event: LogEvent) => void;

/** Null fields named in a text review line; the rest are counted. */
const REVIEW_FIELDS_SHOWN = 20;
/** Text from the network is cut past this many characters in a text line: a line stays a line. */
const NETWORK_TEXT_SHOWN = 200;

/** What -q leaves out: the lines of events that went well. */
const CHATTER: ReadonlySet<LogEvent['type']> = new Set(['event', 'review', 'test']);

export function createLogger(log: (line: string) => void, json: boolean, quiet = false): Logger {
  return (event) => {
    if (quiet && CHATTER.has(event.type)) return;
    log(json ? JSON.stringify(event) : formatText(event));
  };
}

function formatText(event: LogEvent): string {
  switch (event.type) {
    case 'event': {
      const other =
        event.other_data === true
          ? ` with other data than the first (kept in the inbox as #${event.inbox_seq}, not written)`
          : '';
      return `<-- ${_inert(event.document_id)} parser=${_quoted(event.parser)} pages=${event.pages} ${event.outcome}${other}`;
    }
    case 'review': {
      // A line stays a line: past the first few, the count (review.jsonl lists them all).
      const shown = event.null_fields.slice(0, REVIEW_FIELDS_SHOWN).map(_inert).join(', ');
      const more = event.null_fields.length - REVIEW_FIELDS_SHOWN;
      return `    ${_inert(event.document_id)} (${_inert(event.file_name)}) needs review: null ${shown}${more > 0 ? ` and ${more} more (review.jsonl)` : ''}`;
    }
    case 'unauthorized':
      return `<-- 401 ${event.method} ${event.path}: ${event.reason}`;
    case 'invalid':
      return `<-- 400 ${event.method}: ${_inert(event.reason)} (kept as rejected #${event.rejected_id})`;
    case 'too_large':
      return `<-- 413 ${event.method}: body over ${event.limit_bytes} bytes`;
    case 'forbidden':
      return `<-- 403 ${event.method}: ${event.reason}`;
    case 'test':
      return `<-- test event ${_inert(event.document_id)} (an integration's test action: acknowledged, not written)`;
    case 'kept':
      return `<-- ${event.document_id === '' ? '(no document_id)' : _inert(event.document_id)} kept, not written: ${_inert(event.reason)} (inbox #${event.inbox_seq}; an event of a shape listen does not know)`;
    case 'field_ids':
      return `hint: the data of ${_inert(event.document_id)} is keyed by field ids (such as ${event.key}), not field names: the deployed service keys data by field id. listen writes the keys as sent, so the JSON keys and CSV columns are these ids; to have names, map each id to its field's name downstream (the ids are your parser's fields). Said once per run.`;
    case 'quarantined':
      return `error: inbox event #${event.inbox_seq} cannot be written (${event.reason}); it is quarantined in the inbox and the next events go on`;
    case 'error':
      return `error: ${event.message}`;
    case 'summary': {
      const kept = event.kept > 0 ? `, ${event.kept} kept` : '';
      const tests = event.tests > 0 ? `, test events ${event.tests}` : '';
      return `received ${event.received} (${event.new} new, ${event.duplicates} duplicate${kept}), rejected ${event.rejected}, unauthorized ${event.unauthorized}${tests}`;
    }
  }
}

/** Text from the network, inert in a text line (src/inert.ts), and cut shorter than elsewhere: a line stays a line. */
function _inert(text: string): string {
  return inert(text, NETWORK_TEXT_SHOWN);
}

/** Parser names are chosen by people and may hold spaces. */
function _quoted(text: string): string {
  return /^[^\s"=]+$/.test(text) ? _inert(text) : _inert(JSON.stringify(text));
}
