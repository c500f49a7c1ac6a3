import { z } from 'zod';
import { Results } from './results.ts';

/** Spec, "Events": the only event kind. */
export const WEBHOOK_EVENT = 'document.processed';

/** How a document arrived. The spec names upload, email, api; "webhook" is the emulator's choice. */
export const SourceType = z.enum(['api', 'upload', 'email', 'webhook']);
export type SourceType = z.infer<typeof SourceType>;

const ISO_UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const WebhookPayload = z.object({
  event: z.literal(WEBHOOK_EVENT),
  parser_id: z.string(),
  parser_name: z.string(),
  document_id: z.string(),
  timestamp: z.string().regex(ISO_UTC_MILLIS, 'expected ISO 8601 UTC with milliseconds'),
  data: Results,
  metadata: z.object({
    file_name: z.string(),
    mime_type: z.string(),
    source_type: z.string(),
    page_count: z.number().int().nonnegative(),
  }).loose(),
}).loose();
export type WebhookPayload = z.infer<typeof WebhookPayload>;
