import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { setMetaOnce } from '../store.ts';

/**
 * The per-parser inbound webhook address: `/inbound/<parser_id>/<token>`, where the token
 * is an HMAC of the parser id with a secret of the data directory. The address is the
 * credential, as with the real service's inbound URLs; it survives restarts.
 */
export const INBOUND_PREFIX = '/inbound';

export type InboundTokens = { tokenFor(parserId: string): string; verify(parserId: string, token: string): boolean };

export function createInboundTokens(db: DatabaseSync): InboundTokens {
  const secret = Buffer.from(setMetaOnce(db, 'inbound_secret', randomBytes(32).toString('hex')), 'hex');
  const tokenFor = (parserId: string) =>
    createHmac('sha256', secret).update(`inbound\n${parserId}`).digest('hex').slice(0, 32);
  return {
    tokenFor,
    verify(parserId, token) {
      const expected = Buffer.from(tokenFor(parserId));
      const given = Buffer.from(token);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
