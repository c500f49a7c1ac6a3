import { z } from 'zod';
import { Results } from './results.ts';

/** Spec, "Events": the only event kind. */
export const WEBHOOK_EVENT = 'document.processed';

/** How a document arrived. The spec names upload, email, api; "webhook" is the emulator's choice. */
export const SourceType = z.enum(['api', 'upload', 'email', 'webhook']);
export type SourceType = z.infer<typeof SourceType>;

/**
 * Any RFC 3339 date-time (the spec says ISO 8601; a sender may write `+00:00` for `Z`, or no
 * milliseconds). The emulator itself always sends UTC with milliseconds.
 */
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** How deep a payload's JSON may nest (objects and arrays): results are a few levels; 2,000 is an attack. */
export const MAX_PAYLOAD_DEPTH = 32;

/**
 * The nesting depth of a JSON text, found by scanning it (no parse, no recursion), stopping as
 * soon as it passes `limit`: a payload of 2,000 nested arrays is refused before anything recurses into it.
 */
export function jsonDepthOver(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export const WebhookPayload = z
  .object({
    event: z.literal(WEBHOOK_EVENT),
    parser_id: z.string(),
    parser_name: z.string(),
    document_id: z.string(),
    timestamp: z
      .string()
      .regex(RFC_3339, 'expected an RFC 3339 date-time, such as 2024-03-15T10:20:30.123Z')
      .refine((t) => !Number.isNaN(Date.parse(t.replace(' ', 'T'))), 'not a real date-time'),
    data: Results,
    metadata: z
      .object({
        file_name: z.string(),
        mime_type: z.string(),
        source_type: z.string(),
        page_count: z.number().int().nonnegative(),
      })
      .loose(),
  })
  .loose();
export type WebhookPayload = z.infer<typeof WebhookPayload>;

/**
 * An integration's test action, not a document: the interface marks it `"test": true`; the
 * deployed service sends none, but names its sample `document_id: "test-<ms>"` (its real
 * documents have UUIDs), so that prefix marks it too. Read from the raw JSON object: a test's
 * sample data need not fit the contract.
 */
const TEST_DOCUMENT_PREFIX = 'test-';
export function isTestEvent(event: Readonly<Record<string, unknown>>): boolean {
  return (
    event.test === true || (typeof event.document_id === 'string' && event.document_id.startsWith(TEST_DOCUMENT_PREFIX))
  );
}
