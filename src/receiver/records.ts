import type { WebhookPayload } from '../contract/index.ts';
import { type DocumentRecord, completedRecord } from '../outputs/index.ts';
import { type MissingMarker, recordWithoutMarker } from '../outputs/missing-marker.ts';

/**
 * What a received event becomes: the same DocumentRecord the batch client writes, so one
 * set of writers serves both. Values are copied as they came: a null stays null (spec,
 * "Delivery rules" 6: missing information for a person, never zero), and so is a value that is
 * exactly the service's missing marker (the deployed service's webhooks carry "-"), as in a
 * batch run's records.
 */
export function recordOf(payload: WebhookPayload, marker: MissingMarker): DocumentRecord {
  const origin = { file: payload.metadata.file_name, document_id: payload.document_id, route: 'webhook' } as const;
  return recordWithoutMarker(completedRecord(origin, payload.metadata.page_count, payload.data), marker);
}

export { nullFields } from '../outputs/review.ts';

/** A field id as the deployed service writes it: a UUID (8-4-4-4-12 hex digits). */
const FIELD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A key of `data` that is a field id rather than a name, if any: the interface keys results by
 * field name, the deployed service by field id, and a user reading the outputs should know why.
 */
export function fieldIdKey(data: WebhookPayload['data']): string | undefined {
  return Object.keys(data).find((key) => FIELD_ID.test(key));
}
