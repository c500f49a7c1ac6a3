import type { WebhookPayload } from '../contract/index.ts';
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

export { nullFields } from '../outputs/review.ts';
