import { createHash, timingSafeEqual } from 'node:crypto';
import type { ReceiverAuth } from './options.ts';

/**
 * Checks the Authorization header of an incoming event (spec, "Authentication" 3).
 * Both sides are hashed with SHA-256 before timingSafeEqual, so the comparison takes the
 * same time whatever the length or the number of right characters of a guess. The reasons
 * never carry the secret nor what was presented: they go to logs.
 */
type AuthFailure =
  | 'missing Authorization header'
  | 'wrong scheme (expected Bearer)'
  | 'wrong scheme (expected Basic)'
  | 'malformed Basic credentials'
  | typeof _DOUBLED.bearer
  | typeof _DOUBLED.basic
  | 'wrong token'
  | 'wrong credentials';

type AuthResult = { ok: true } | { ok: false; reason: AuthFailure };

export type Authenticator = {
  check(authorization: string | undefined): AuthResult;
  /** The WWW-Authenticate challenge for a 401, if the scheme has one. */
  readonly challenge: string | undefined;
  /** Whether a sender must prove itself (not --auth none): then passing check() vouches for it. */
  readonly required: boolean;
};

const REALM = 'extract listen';

/**
 * The sender's settings take the credential alone and add the scheme themselves; a user who
 * pastes the whole header value sends the scheme twice, and is told so (the secret is not shown).
 */
const _DOUBLED = {
  bearer: '"Bearer " twice (paste only the token: the service adds "Bearer ")',
  basic: '"Basic " twice (paste only the base64 value as Base64 Credentials: the service adds "Basic ")',
} as const;
const sha256 = (value: string | Buffer): Buffer => createHash('sha256').update(value).digest();

export function createAuthenticator(auth: ReceiverAuth): Authenticator {
  switch (auth.type) {
    case 'none':
      return { check: () => ({ ok: true }), challenge: undefined, required: false };
    case 'bearer': {
      const expected = sha256(auth.token);
      return {
        challenge: `Bearer realm="${REALM}"`,
        required: true,
        check(header) {
          const credentials = _credentialsOf(header, 'bearer');
          if (!credentials.ok) return credentials;
          return timingSafeEqual(expected, sha256(credentials.value))
            ? { ok: true }
            : { ok: false, reason: 'wrong token' };
        },
      };
    }
    case 'basic': {
      // RFC 7617: base64 of "user:password" in UTF-8; comparing the whole pair at once
      // does not tell a caller which half was wrong.
      const expected = sha256(Buffer.from(`${auth.username}:${auth.password}`, 'utf8'));
      return {
        challenge: `Basic realm="${REALM}", charset="UTF-8"`,
        required: true,
        check(header) {
          const credentials = _credentialsOf(header, 'basic');
          if (!credentials.ok) return credentials;
          if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credentials.value))
            return { ok: false, reason: 'malformed Basic credentials' };
          const decoded = Buffer.from(credentials.value, 'base64');
          if (!decoded.includes(0x3a)) return { ok: false, reason: 'malformed Basic credentials' };
          return timingSafeEqual(expected, sha256(decoded)) ? { ok: true } : { ok: false, reason: 'wrong credentials' };
        },
      };
    }
  }
}

function _credentialsOf(
  header: string | undefined,
  scheme: 'bearer' | 'basic',
): { ok: true; value: string } | { ok: false; reason: AuthFailure } {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing Authorization header' };
  // The scheme name is case-insensitive (RFC 9110, 11.1).
  if (new RegExp(`^${scheme}\\s+${scheme}\\s`, 'i').test(header.trim())) return { ok: false, reason: _DOUBLED[scheme] };
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header.trim());
  if (!match || match[1]!.toLowerCase() !== scheme) {
    return {
      ok: false,
      reason: scheme === 'bearer' ? 'wrong scheme (expected Bearer)' : 'wrong scheme (expected Basic)',
    };
  }
  return { ok: true, value: match[2]! };
}
