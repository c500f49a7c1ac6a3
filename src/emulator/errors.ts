/**
 * The emulator's errors: a code each, mapped to one HTTP status by the router.
 * The rule-holding modules throw these and know nothing of HTTP.
 */
export type GatewayErrorCode =
  /** The Authorization header is missing, malformed or names no key. */
  | 'unauthorized'
  /** The body does not have the shape the operation needs. */
  | 'invalid_request'
  /** No such document (or it belongs to another parser), no such route. */
  | 'not_found'
  /** The balance cannot cover the document's pages. */
  | 'insufficient_credits'
  /** The signed upload address is tampered with, expired, or used another way than signed. */
  | 'upload_forbidden'
  /** The stored object was already submitted; it is immutable now. */
  | 'conflict'
  /** The storage path has no bytes yet. */
  | 'upload_missing'
  /** The request body is over the inline cap. */
  | 'payload_too_large'
  /** The media type of the request is not one the operation takes. */
  | 'unsupported_media_type'
  /** The document cannot be read (corrupt, encrypted, unsupported, empty). */
  | 'unreadable_document'
  /** An inline extraction outlasted the inline time limit; nothing was charged. */
  | 'inline_timeout'
  /** The HTTP method is not one the path takes. */
  | 'method_not_allowed'
  /** A failure of the emulator itself during extraction; refunded. */
  | 'extraction_failed'
  /** The disk under the data directory is full: nothing was stored, nothing charged. */
  | 'insufficient_storage'
  /** A Host header that names no loopback host (DNS rebinding), or a write from another origin's page. */
  | 'forbidden'
  /** The deployed profile's platform: a request body over its cap, refused before the function runs. */
  | 'function_payload_too_large'
  /** The deployed profile's platform: the function outlasted its time limit and was stopped. */
  | 'function_invocation_timeout';

export const STATUS_OF: Record<GatewayErrorCode, number> = {
  unauthorized: 401,
  invalid_request: 400,
  not_found: 404,
  insufficient_credits: 402,
  upload_forbidden: 403,
  conflict: 409,
  upload_missing: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unreadable_document: 422,
  inline_timeout: 503,
  method_not_allowed: 405,
  extraction_failed: 500,
  insufficient_storage: 507,
  forbidden: 403,
  function_payload_too_large: 413,
  function_invocation_timeout: 504,
};

/**
 * Answers of the serverless platform the deployed service runs on, not of its application: plain
 * text (a title, then the code in capitals), the code also in a header, never the API's JSON.
 */
export const PLATFORM_ANSWERS: Partial<Record<GatewayErrorCode, { title: string; name: string }>> = {
  function_payload_too_large: { title: 'Request Entity Too Large', name: 'FUNCTION_PAYLOAD_TOO_LARGE' },
  function_invocation_timeout: {
    title: 'An error occurred with your deployment',
    name: 'FUNCTION_INVOCATION_TIMEOUT',
  },
};

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  constructor(code: GatewayErrorCode, message: string) {
    super(message);
    this.name = 'GatewayError';
    this.code = code;
  }
}
