import { z } from 'zod';
import { Results } from './results.ts';

/**
 * Wire shapes of the service's API (spec: "Endpoints"). Response schemas are loose
 * (extra keys pass) because the client must tolerate a real service that adds fields;
 * the emulator builds its responses from the same types.
 */

export { API_PREFIX } from './constants.ts';

export const DocumentStatus = z.enum(['processing', 'completed', 'error']);
export type DocumentStatus = z.infer<typeof DocumentStatus>;

/** Operation 1 request. Which fields are required is "not shown"; the emulator requires both. */
export const UploadUrlRequest = z.object({
  file_name: z.string().min(1).max(1024),
  file_type: z.string().min(1).max(255),
});
export type UploadUrlRequest = z.infer<typeof UploadUrlRequest>;

/** Operation 1 response: the upload ticket. */
export const UploadTicket = z.object({
  upload_url: z.string().min(1),
  storage_path: z.string().min(1),
  expires_in: z.number().positive(),
});
export type UploadTicket = z.infer<typeof UploadTicket>;

/** Operation 3a: the file travels base64-encoded in the body. */
const InlineFile = z.object({
  data: z.base64("file.data must be the file's bytes in standard base64"),
  name: z.string().min(1).max(1024),
  type: z.string().min(1).max(255).optional(),
});
export const ExtractInlineRequest = z.object({ file: InlineFile });
export type ExtractInlineRequest = z.infer<typeof ExtractInlineRequest>;

/** Operation 3b. Which fields are required is "not shown"; the emulator requires storage_path only. */
export const ExtractStoredRequest = z.object({
  storage_path: z.string().min(1).max(2048),
  file_name: z.string().min(1).max(1024).optional(),
  file_type: z.string().min(1).max(255).optional(),
  file_size: z.number().int().nonnegative().optional(),
});
export type ExtractStoredRequest = z.infer<typeof ExtractStoredRequest>;

/**
 * The body of operation 3 as the emulator first reads it: `file` and `storage_path`
 * are alternatives, and sending both or neither is a 400 that says so.
 */
export const ExtractRequest = z
  .object({ file: z.unknown().optional(), storage_path: z.unknown().optional() })
  .loose()
  .transform((body, ctx) => {
    const hasFile = body.file !== undefined;
    const hasPath = body.storage_path !== undefined;
    if (hasFile === hasPath) {
      ctx.addIssue({
        code: 'custom',
        message: hasFile
          ? 'send either "file" (inline) or "storage_path" (upload-and-poll), not both'
          : 'send "file" (inline, base64) or "storage_path" (from POST /api/v1/upload-url)',
      });
      return z.NEVER;
    }
    if (hasFile) return { shape: 'inline' as const, request: _parsedWithin(ExtractInlineRequest, body, ctx) };
    return { shape: 'stored' as const, request: _parsedWithin(ExtractStoredRequest, body, ctx) };
  });

/** `body` read by `schema`, its problems made the outer parse's (which then fails whatever is returned). */
function _parsedWithin<S extends z.ZodType>(schema: S, body: unknown, ctx: z.RefinementCtx): z.output<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  for (const i of r.error.issues) ctx.addIssue({ ...i, code: 'custom', message: i.message });
  return z.NEVER;
}
export type ExtractRequest = z.output<typeof ExtractRequest>;

export const ExtractInlineResponse = z.object({
  success: z.boolean(),
  parser_id: z.string(),
  document_id: z.string(),
  results: Results,
});
export type ExtractInlineResponse = z.infer<typeof ExtractInlineResponse>;

/**
 * A failed inline extraction answered 200 (the deployed service's route does so; `extract serve
 * --profile deployed` too): refunded, the document named.
 */
export const ExtractFailedResponse = z.object({
  success: z.literal(false),
  parser_id: z.string(),
  document_id: z.string(),
  error: z.string(),
});
export type ExtractFailedResponse = z.infer<typeof ExtractFailedResponse>;

export const ExtractAcceptedResponse = z.object({
  success: z.boolean(),
  document_id: z.string(),
  status: DocumentStatus,
  poll_url: z.string(),
});
export type ExtractAcceptedResponse = z.infer<typeof ExtractAcceptedResponse>;

/** Operation 4 response (spec: "Document"). page_count and results are null until known. */
export const DocumentBody = z.object({
  document_id: z.string(),
  status: DocumentStatus,
  file_name: z.string(),
  page_count: z.number().int().nonnegative().nullable(),
  results: Results.nullable(),
  error: z.string().nullable(),
});
export type DocumentBody = z.infer<typeof DocumentBody>;

/**
 * Error bodies. The spec does not show their shape; the emulator always sends this one.
 * A client must not rely on it against the real service (see client/errors).
 */
export const ErrorBody = z.object({
  success: z.literal(false),
  error: z.string(),
  code: z.string(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/**
 * An error body as the client reads it from any service: JSON naming an error in `error`
 * (text, or an object with a message), `message` or `detail`. At least one must be there.
 * The emulator's ErrorBody is one such body.
 */
export const ErrorAnswer = z
  .object({
    error: z.union([z.string(), z.object({ message: z.string().optional() }).loose()]).optional(),
    message: z.string().optional(),
    detail: z.string().optional(),
  })
  .loose()
  .refine((b) => b.error !== undefined || b.message !== undefined || b.detail !== undefined);
