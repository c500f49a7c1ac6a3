import { createHash } from 'node:crypto';

/**
 * The Idempotency-Key of an extract request: derived from the content (sha256), the target
 * (fingerprint of base URL and key) and the request's shape, so the same request always
 * carries the same key. Inline: the name and type are part of the body, so they are part of
 * the key (a renamed file is another request, not a clash). Storage path: each upload has
 * its own path, so a later upload of the same file is a new request with a new key.
 */
export function idempotencyKey(
  sha256: string,
  target: string,
  request: { file_name: string; file_type: string; storage_path?: string | undefined },
): string {
  const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
  const shape =
    request.storage_path === undefined
      ? `inline-${digest(`${request.file_name}\n${request.file_type}`)}`
      : `upload-${digest(request.storage_path)}`;
  return `extract-${sha256.slice(0, 32)}-${target}-${shape}`;
}
