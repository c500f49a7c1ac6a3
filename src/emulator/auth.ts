import { createHash, timingSafeEqual } from 'node:crypto';
import type { ParserConfig } from '../contract/index.ts';
import { GatewayError } from './errors.ts';

/**
 * API keys (spec, "Authentication" 1): `Authorization: Bearer ext_...`, each key scoped to
 * one parser. Keys are looked up by their SHA-256 and then compared in constant time, so
 * neither the lookup nor the comparison leaks how much of a guess was right.
 */
export type KeyRing = { parserFor(authorization: string | undefined): ParserConfig };

const sha256 = (s: string) => createHash('sha256').update(s).digest();

export function createKeyRing(parsers: readonly ParserConfig[]): KeyRing {
  const byDigest = new Map<string, { digest: Buffer; parser: ParserConfig }>();
  for (const parser of parsers) {
    for (const key of parser.api_keys) {
      const digest = sha256(key);
      byDigest.set(digest.toString('hex'), { digest, parser });
    }
  }
  return {
    parserFor(authorization) {
      if (authorization === undefined || authorization.trim() === '') {
        throw new GatewayError('unauthorized', 'missing Authorization header: send "Authorization: Bearer <API key>"');
      }
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match) {
        throw new GatewayError(
          'unauthorized',
          'malformed Authorization header: it must be "Bearer " followed by the API key',
        );
      }
      const presented = sha256(match[1]!);
      const found = byDigest.get(presented.toString('hex'));
      if (!found || !timingSafeEqual(found.digest, presented)) {
        throw new GatewayError(
          'unauthorized',
          'unknown API key: check the key (it starts with "ext_") for this parser',
        );
      }
      return found.parser;
    },
  };
}
