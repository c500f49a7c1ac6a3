import { createHash } from 'node:crypto';

/**
 * The digest the journal index keeps of the journal's bytes before its offset (journal-index.ts):
 * what tells it that the journal it was made from is the one it is beside.
 */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
