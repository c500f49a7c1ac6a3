import type { ResultValue, Results, WebhookPayload } from '../contract/index.ts';
import { type DocumentRecord, completedRecord } from '../outputs/index.ts';

/**
 * What a received event becomes: the same DocumentRecord the batch client writes, so one
 * set of writers serves both. Values are copied as they came: a null stays null (spec,
 * "Delivery rules" 6: missing information for a person, never zero).
 */
export function recordOf(payload: WebhookPayload): DocumentRecord {
  const origin = { file: payload.metadata.file_name, document_id: payload.document_id, route: 'webhook' } as const;
  return completedRecord(origin, payload.metadata.page_count, payload.data);
}

/**
 * Paths of every null in the results, for the review list: `total`, `customer.email`,
 * `lines[1].amount`. An Object field that is null as a whole is listed by its own name.
 */
export function nullFields(results: Results): string[] {
  const found: string[] = [];
  const visit = (value: ResultValue, path: string): void => {
    if (value === null) found.push(path);
    else if (Array.isArray(value)) for (const [i, row] of value.entries()) visit(row, `${path}[${i}]`);
    else if (typeof value === 'object')
      for (const [key, child] of Object.entries(value)) visit(child, `${path}.${key}`);
  };
  for (const [key, value] of Object.entries(results)) visit(value, key);
  return found;
}

/** One line of review.jsonl. */
export type ReviewEntry = { document_id: string; file_name: string; null_fields: string[] };
