import { hash, timingSafeEqual } from 'node:crypto';
import type { ParserConfig } from '../contract/index.ts';
import { GatewayError } from './errors.ts';

/**
 * API keys (spec, "Authentication" 1): `Authorization: Bearer ext_...`, each key scoped to
 * one parser. Keys are looked up by their SHA-256 and then compared in constant time, so
 * neither the lookup nor the comparison leaks how much of a guess was right.
 *
 * A connection remembers the Authorization value it last authenticated with: the next request
 * on it presenting the same bytes (compared in constant time) skips the hash. Polling clients
 * keep their connections, and a SHA-256 through OpenSSL costs a read of a document as much as
 * the rest of the request (`npm run bench` row 6). What is compared is
 * only what this connection itself sent before, and only once it proved to be a key.
 */
export type KeyRing = {
  /** `connection`: any object that lives as long as the client's connection (the socket). */
  parserFor(authorization: string | undefined, connection?: object): ParserConfig;
};

const sha256 = (s: string) => hash('sha256', s, 'buffer');

export function createKeyRing(parsers: readonly ParserConfig[]): KeyRing {
  const byDigest = new Map<string, { digest: Buffer; parser: ParserConfig }>();
  for (const parser of parsers) {
    for (const key of parser.api_keys) {
      const digest = sha256(key);
      byDigest.set(digest.toString('hex'), { digest, parser });
    }
  }
  const lastOf = new WeakMap<object, { authorization: Buffer; parser: ParserConfig }>();

  function lookUp(authorization: string | undefined): ParserConfig {
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
      throw new GatewayError('unauthorized', 'unknown API key: check the key (it starts with "ext_") for this parser');
    }
    return found.parser;
  }

  return {
    parserFor(authorization, connection) {
      if (connection === undefined || authorization === undefined) return lookUp(authorization);
      const presented = Buffer.from(authorization);
      const last = lastOf.get(connection);
      if (
        last !== undefined &&
        last.authorization.length === presented.length &&
        timingSafeEqual(last.authorization, presented)
      )
        return last.parser;
      const parser = lookUp(authorization);
      lastOf.set(connection, { authorization: presented, parser });
      return parser;
    },
  };
}
