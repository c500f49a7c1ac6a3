import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_PREFIX } from '../../contract/constants.ts';
import type { KeyRing } from '../auth.ts';
import type { Faults } from '../faults.ts';
import type { FinishedBodies } from '../finished-bodies.ts';
import { PREFER } from './faults.ts';
import { firstHeader, HEADER, rememberedHostProblems } from './http.ts';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const DOCUMENTS = `${API_PREFIX}/documents/`;

/**
 * The read of a finished document whose body the document route keeps (routes/api.ts), answered
 * by the HTTP server before Fastify: polling clients read the same few documents again and
 * again, and Fastify's routing, request and reply objects and hooks cost such a read about as
 * much as Node's own HTTP (`npm run bench` row 6). Only the plain case is answered here, with
 * the bytes, status and headers the route answers it with; anything else goes on to Fastify
 * unchanged, which answers it as ever:
 * - a GET of exactly /api/v1/documents/{id}, the id a kept one (a query string, an escaped id or
 *   a document never kept, processing, is not a key of the map);
 * - a Host the loopback guard allows (the same rule, remembered per value as there);
 * - the key authenticates, and as the parser the body was kept for (a wrong or missing key, or
 *   another parser's, gets the route's 401 or 404);
 * - no Prefer header and no fault rule that may still fire on `documents` (the fault hooks draw,
 *   count and apply them);
 * - not when requests are logged (the log line is the onResponse hook's): `serve -q` only.
 */
export function fastReads(input: { kept: FinishedBodies; keys: KeyRing; faults: Faults; boundHost: string }) {
  const { kept, keys, faults } = input;
  const hostProblemOf = rememberedHostProblems(input.boundHost);
  return (handler: Handler): Handler =>
    (request, response) => {
      if (request.method !== 'GET' || !request.url?.startsWith(DOCUMENTS)) return handler(request, response);
      const body = kept.get(request.url.slice(DOCUMENTS.length));
      if (
        body === undefined ||
        request.headers[PREFER] !== undefined ||
        faults.armed('documents') ||
        hostProblemOf(firstHeader(request.headers[HEADER.host])) !== null
      )
        return handler(request, response);
      let parserId: string;
      try {
        parserId = keys.parserFor(request.headers[HEADER.authorization], request.socket).parser_id;
      } catch {
        return handler(request, response);
      }
      if (parserId !== body.parserId) return handler(request, response);
      response.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': body.bytes.length,
      });
      response.end(body.bytes);
    };
}
