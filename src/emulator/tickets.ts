import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { setMetaOnce } from './store.ts';
import { GatewayError } from './errors.ts';

/**
 * Signed upload addresses (spec, "Upload ticket"): single-purpose (PUT of one storage
 * path with one declared Content-Type) and short-lived. The signature is an HMAC over
 * exactly those, with a secret kept in the data directory so tickets outlive a restart.
 */
export const STORAGE_PREFIX = '/_storage/';

export type Signer = {
  sign(storagePath: string, fileType: string, expires: number): string;
  /** Throws upload_forbidden with a reason unless `sig` is the signature of exactly this use. */
  verify(input: {
    storagePath: string;
    fileType: string;
    query: Partial<Record<string, unknown>>;
    nowMs: number;
  }): void;
};

export function createSigner(db: DatabaseSync): Signer {
  const secret = Buffer.from(setMetaOnce(db, 'upload_secret', randomBytes(32).toString('hex')), 'hex');
  const sign = (storagePath: string, fileType: string, expires: number) =>
    createHmac('sha256', secret).update(`PUT\n${storagePath}\n${fileType.toLowerCase()}\n${expires}`).digest('hex');
  return {
    sign,
    verify({ storagePath, fileType, query, nowMs }) {
      const expires = Number(query.expires);
      const sig = typeof query.sig === 'string' ? query.sig : '';
      if (!Number.isSafeInteger(expires) || !/^[0-9a-f]{64}$/.test(sig)) {
        throw new GatewayError(
          'upload_forbidden',
          'the upload address is not signed: use upload_url exactly as returned by POST /api/v1/upload-url',
        );
      }
      const expected = Buffer.from(sign(storagePath, fileType, expires), 'hex');
      if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) {
        throw new GatewayError(
          'upload_forbidden',
          'the upload address signature does not match: the address was altered; use upload_url exactly as returned',
        );
      }
      if (nowMs > expires * 1000) {
        throw new GatewayError(
          'upload_forbidden',
          'the upload address has expired: request a new one with POST /api/v1/upload-url',
        );
      }
    },
  };
}

/** The upload address: the storage path's segments, escaped, under the storage prefix. */
export function uploadUrl(baseUrl: string, storagePath: string, expires: number, sig: string): string {
  const path = storagePath.split('/').map(encodeURIComponent).join('/');
  return `${baseUrl}${STORAGE_PREFIX}${path}?expires=${expires}&sig=${sig}`;
}
