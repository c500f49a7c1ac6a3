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
