import { z } from 'zod';
import { ErrorBody } from './api.ts';

/**
 * What `extract listen` answers a sender of events. The receiver is ours, not the service's,
 * but its errors take the emulator's ErrorBody shape, so one reader handles both.
 */
export const ReceiverErrorCode = z.enum([
  'unauthorized',
  'forbidden',
  'invalid_payload',
  'payload_too_large',
  'method_not_allowed',
  'not_found',
  'internal',
]);
export type ReceiverErrorCode = z.infer<typeof ReceiverErrorCode>;

/** Every answer that is not a 200: what went wrong, in words a sender's log can show. */
export const ReceiverErrorBody = ErrorBody.extend({ code: ReceiverErrorCode });
export type ReceiverErrorBody = z.infer<typeof ReceiverErrorBody>;

/** The 200: the event is on disk (its place in the inbox); processing follows. */
export const ReceiverAccepted = z.strictObject({
  received: z.literal(true),
  document_id: z.string(),
  inbox_seq: z.number().int().positive(),
});
export type ReceiverAccepted = z.infer<typeof ReceiverAccepted>;

/** The 200 to an integration's test event: acknowledged and logged, never written. */
export const ReceiverTestAccepted = z.strictObject({
  received: z.literal(true),
  test: z.literal(true),
  document_id: z.string(),
});
export type ReceiverTestAccepted = z.infer<typeof ReceiverTestAccepted>;
